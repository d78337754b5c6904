/*
 * The pegplus world and pp_world_step: the stages of docs/design.md "One step", top to bottom.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "world_internal.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double pp_now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

const char *pp_model_name(pp_model model)
{
    switch (model) {
    case PP_MODEL_ODE: return "ode";
    case PP_MODEL_STANDARD: return "standard";
    case PP_MODEL_PEG: return "peg";
    }
    return "unknown";
}

pp_config pp_config_default(void)
{
    pp_config c;
    memset(&c, 0, sizeof c);
    c.model = PP_MODEL_PEG;
    c.ode_stepper = PP_ODE_WORLD_STEP;
    c.ode_max_contacts = 8;
    c.surface.mu = 0.5;
    c.surface.bounce = 0.0;
    c.surface.bounce_vel = 0.0;
    c.surface.plus_v_plastic = 0.0;
    c.surface.ode_mode = dContactApprox1;
    c.surface.ode_soft_erp = -1.0;
    c.surface.ode_soft_cfm = -1.0;
    c.surface_fn = NULL;
    c.surface_user = NULL;
    c.proximity_margin = 0.01;
    c.friction_directions = 8;
    c.compliance = 0.0;
    c.relinearize_iterations = 20;
    c.threads = 1;
    c.lcp_budget_seconds = 10.0;
    c.lcp_budget_pivots = 0;
    c.load_sharing = 1;
    c.max_correcting_velocity = 0.1;
    c.post_stabilisation = 1;
    return c;
}

static pp_status reject(const char *what, double value)
{
    pp_log(PP_LOG_ERROR, "invalid configuration: %s (got %g)", what, value);
    return PP_ERR_INVALID_ARGUMENT;
}

pp_status pp_config_validate(const pp_config *c)
{
    if (!c) {
        pp_log(PP_LOG_ERROR, "pp_config_validate: config is NULL");
        return PP_ERR_NULL_ARGUMENT;
    }
    if (c->model != PP_MODEL_ODE && c->model != PP_MODEL_STANDARD && c->model != PP_MODEL_PEG)
        return reject("model must be PP_MODEL_ODE, PP_MODEL_STANDARD or PP_MODEL_PEG", c->model);
    if (c->ode_stepper != PP_ODE_WORLD_STEP && c->ode_stepper != PP_ODE_QUICK_STEP)
        return reject("ode_stepper must be PP_ODE_WORLD_STEP or PP_ODE_QUICK_STEP", c->ode_stepper);
    if (c->ode_max_contacts < 1 || c->ode_max_contacts > 64)
        return reject("ode_max_contacts must be in 1..64", c->ode_max_contacts);
    double value;
    const char *surface = pp_surface_problem(&c->surface, 1, &value); /* any model may run it */
    if (surface) {
        pp_log(PP_LOG_ERROR, "invalid configuration: surface.%s (got %g)", surface, value);
        return PP_ERR_INVALID_ARGUMENT;
    }
    if (!(c->proximity_margin > 0.0) || !isfinite(c->proximity_margin) || c->proximity_margin > 1e3)
        return reject("proximity_margin must be finite, > 0 and at most 1e3 m", c->proximity_margin);
    if (c->friction_directions < 2 || c->friction_directions > 64)
        return reject("friction_directions must be in 2..64 (2: planar worlds)",
                      c->friction_directions);
    if (!(c->compliance >= 0.0) || !(c->compliance <= 1e-3))
        return reject("compliance must be in [0, 1e-3]", c->compliance);
    if (c->relinearize_iterations < 0 || c->relinearize_iterations > 100)
        return reject("relinearize_iterations must be in 0..100", c->relinearize_iterations);
    if (c->threads < 1 || c->threads > PP_MAX_THREADS)
        return reject("threads must be in 1..64", c->threads);
    if (c->load_sharing != 0 && c->load_sharing != 1)
        return reject("load_sharing must be 0 or 1", c->load_sharing);
    if (c->post_stabilisation != 0 && c->post_stabilisation != 1)
        return reject("post_stabilisation must be 0 or 1", c->post_stabilisation);
    if (!(c->max_correcting_velocity > 0.0)) /* INFINITY allowed: no bound */
        return reject("max_correcting_velocity must be > 0 m/s (INFINITY: no bound)",
                      c->max_correcting_velocity);
    if (!(c->lcp_budget_seconds >= 0.0) || !(c->lcp_budget_seconds <= 3600.0))
        return reject("lcp_budget_seconds must be in [0, 3600] s (0: no limit)",
                      c->lcp_budget_seconds);
    if (c->lcp_budget_pivots < 0)
        return reject("lcp_budget_pivots must be >= 0 (0: no limit)", (double)c->lcp_budget_pivots);
    return PP_OK;
}

pp_status pp_world_create(dWorldID ode_world, dSpaceID space, const pp_config *config,
                          pp_world **out)
{
    if (!out) {
        pp_log(PP_LOG_ERROR, "pp_world_create: out is NULL");
        return PP_ERR_NULL_ARGUMENT;
    }
    *out = NULL;
    if (!ode_world) {
        pp_log(PP_LOG_ERROR, "pp_world_create: the ODE world is NULL");
        return PP_ERR_NULL_ARGUMENT;
    }
    pp_config c = config ? *config : pp_config_default();
    pp_status st = pp_config_validate(&c);
    if (st != PP_OK) return st;

    pp_world *w = calloc(1, sizeof *w);
    if (!w) {
        pp_log(PP_LOG_ERROR, "pp_world_create: out of memory");
        return PP_ERR_NO_MEMORY;
    }
    w->ode_world = ode_world;
    w->space = space;
    w->config = c;
    w->contact_group = dJointGroupCreate(0);
    *out = w;
    return PP_OK;
}

void pp_world_destroy(pp_world *world)
{
    if (!world) return;
    pp_convex_records_free(world);
    pp_terrain_records_free(world);
    pp_step_scratch_free(&world->scratch);
    pp_near_probe_free(world);
    free(world->warned_geoms);
    dJointGroupDestroy(world->contact_group);
    free(world->ode_contacts);
    free(world->ode_contact_bodies);
    free(world->ode_feedback);
    free(world->ode_program_joints);
    free(world->registered);
    free(world->bodies);
    free(world->body_table);
    free(world->geoms);
    pp_bridge_order_free(world);
    free(world->joints);
    pp_joint_captures_free(world);
    pp_auto_disable_free(world);
    free(world->joint_rows);
    free(world->joint_impulse);
    free(world->saved);
    free(world);
}

static pp_status check_world(const pp_world *world, const char *function)
{
    if (!world) {
        pp_log(PP_LOG_ERROR, "%s: world is NULL", function);
        return PP_ERR_NULL_ARGUMENT;
    }
    return PP_OK;
}

pp_status pp_world_set_model(pp_world *world, pp_model model)
{
    pp_status st = check_world(world, "pp_world_set_model");
    if (st != PP_OK) return st;
    pp_config c = world->config;
    c.model = model;
    return pp_world_set_config(world, &c);
}

pp_model pp_world_get_model(const pp_world *world)
{
    return world ? world->config.model : PP_MODEL_ODE;
}

pp_status pp_world_set_config(pp_world *world, const pp_config *config)
{
    pp_status st = check_world(world, "pp_world_set_config");
    if (st != PP_OK) return st;
    st = pp_config_validate(config);
    if (st == PP_OK) world->config = *config;
    return st;
}

pp_config pp_world_get_config(const pp_world *world)
{
    return world ? world->config : pp_config_default();
}

const pp_step_stats *pp_world_get_stats(const pp_world *world)
{
    return world ? &world->stats : NULL;
}

pp_status pp_world_register_body(pp_world *world, dBodyID body)
{
    pp_status st = check_world(world, "pp_world_register_body");
    if (st != PP_OK) return st;
    if (!body) {
        pp_log(PP_LOG_ERROR, "pp_world_register_body: body is NULL");
        return PP_ERR_NULL_ARGUMENT;
    }
    if (dBodyGetWorld(body) != world->ode_world) {
        pp_log(PP_LOG_ERROR, "pp_world_register_body: body belongs to another ODE world");
        return PP_ERR_INVALID_ARGUMENT;
    }
    for (int i = 0; i < world->registered_count; ++i)
        if (world->registered[i] == body) return PP_OK;
    st = pp_grow((void **)&world->registered, &world->registered_capacity,
                 world->registered_count + 1, sizeof(dBodyID));
    if (st == PP_OK) world->registered[world->registered_count++] = body;
    return st;
}

/* Only pointers are compared: the body may already be destroyed (pegplus.h "Lifetime"). The
 * others keep their order, so the bodies' order in a step (and its bits) does not change. */
pp_status pp_world_unregister_body(pp_world *world, dBodyID body)
{
    pp_status st = check_world(world, "pp_world_unregister_body");
    if (st != PP_OK) return st;
    if (!body) {
        pp_log(PP_LOG_ERROR, "pp_world_unregister_body: body is NULL");
        return PP_ERR_NULL_ARGUMENT;
    }
    for (int i = 0; i < world->registered_count; ++i)
        if (world->registered[i] == body) {
            memmove(&world->registered[i], &world->registered[i + 1],
                    sizeof(dBodyID) * (size_t)(world->registered_count - i - 1));
            world->registered_count--;
            return PP_OK;
        }
    pp_log(PP_LOG_ERROR, "pp_world_unregister_body: dBodyID %p is not registered with this world",
           (void *)body);
    return PP_ERR_INVALID_ARGUMENT;
}

/* ---- the pegplus models ------------------------------------------------------------------ */

static void mark(pp_world *world, pp_stage stage, double *clock)
{
    double now = pp_now_seconds();
    world->stats.time_stage[stage] += now - *clock;
    *clock = now;
}

/* Stage 1: bodies to manage, their state, and their joints' rows. Run again in a step (the
 * auto-disable stage woke bodies), it starts from the accumulators the program left: ODE's
 * getInfo2 adds a powered joint's motor force at a stop to them once a step, as dWorldStep
 * calls it once. */
static pp_status snapshot_bodies(pp_world *world, double h)
{
    pp_bridge_restore_accumulators(world);
    pp_status st = pp_bridge_collect(world);
    if (st == PP_OK) st = pp_bridge_snapshot(world, h);
    if (st == PP_OK) st = pp_bridge_save_accumulators(world);
    if (st == PP_OK) st = pp_stage_joints(world, h);                /* 1b. joint rows  */
    if (st != PP_OK) return st;
    world->stats.bodies = world->body_count;
    world->stats.shapes = world->geom_count;
    return PP_OK;
}

/* Stage 7: nu* = nu + h M^-1 (f_ext + tau_gyro) (Stewart–Trinkle Eq 5 without contacts), here
 * for the bodies in no island; an island's bodies get it in their island's job (step_island),
 * on the worker that solves them. Each body's impulse reads only that body, so it is the same
 * double whichever thread applies it and when. */
static void time_step_free(pp_world *world, double h)
{
    dVector3 g;
    dWorldGetGravity(world->ode_world, g);
    double *gravity = world->scratch.gravity;
    for (int k = 0; k < 3; ++k) gravity[k] = g[k];
    for (int i = 0; i < world->body_count; ++i)
        if (world->scratch.island_of_body[i] < 0)
            pp_body_apply_external_impulse(&world->bodies[i], gravity, h);
}

/* Stage 8: x += h v, q <- q + h/2 (0,w) q normalised, damping (ODE's dxStepBody order), here
 * for the bodies in no island (an island's in its job, after its time step: step_island). No
 * island reads another island's dynamic bodies, and kinematic bodies, which islands share,
 * are in none, so integrating an island's bodies before the other islands are solved changes
 * nothing they read. */
static void integrate_bodies(pp_world *world, double h)
{
    for (int i = 0; i < world->body_count; ++i)
        if (world->scratch.island_of_body[i] < 0) pp_body_integrate_pose(&world->bodies[i], h);
}

/* Stages 2-6 for the interval ahead (dt): pose the shapes, find the candidate pairs, group
 * them into islands, and build every near pair's constraints (standard: a U per contact;
 * PEG: U/I/X sets) into scratch.all, island after island. */
static pp_status prepare_workers(pp_world *world);
static pp_status build_constraints(pp_world *world, double dt);

static pp_status find_contacts(pp_world *world, double dt, double *clock)
{
    pp_stage_pose_shapes(world, dt);
    pp_status st = pp_stage_broadphase(world);                      /* 2. broadphase    */
    if (st == PP_OK) st = pp_stage_islands(world);                  /* 6. islands       */
    if (st == PP_OK) st = prepare_workers(world);
    mark(world, PP_STAGE_BROADPHASE, clock);
    if (st == PP_OK) st = pp_stage_near_probe(world);               /* the program's    */
    mark(world, PP_STAGE_FEATURES, clock);                          /* near callback    */
    if (st != PP_OK) return st;
    st = build_constraints(world, dt);                              /* 3-5. proximity,  */
    mark(world, PP_STAGE_FEATURES, clock);                          /* features,        */
    return st;                                                      /* constraints      */
}

/* Is island i at rest at the start of the step (its bodies' own velocities, before gravity)? */
static int island_at_rest(const pp_world *world, int island, double dt)
{
    const pp_step_scratch *s = &world->scratch;
    for (int e = s->island_body_first[island]; e < s->island_body_first[island + 1]; ++e) {
        const pp_body *b = &world->bodies[s->island_bodies[e]];
        if (!pp_body_at_rest(world, s->island_bodies[e], b->v, b->w, dt)) return 0;
    }
    return 1;
}

/* Stages 3-5 of island i on worker w, appended to the worker's `built` list. PEG's implied
 * sets (pp_peg_params.reduce) are removed only in an island at rest: they are found by exact
 * coincidence of rows, which in a moving island changes from one pose to the next and stops
 * the re-linearisation from converging (measured: the pouring scene at h = 0.016 kept
 * 1e-8 .. 1e-5 m^3 overlaps in 3 of 5 runs when they were removed everywhere, 0 in 5 of 5
 * when only resting islands lose them); a resting island, such as an exactly aligned column
 * whose coincident corners make every set tie, is solved once a step on the reduced sets.
 * Resting islands also lose the vertex sets under a vertex–vertex X (Rule 3 of pegplus/peg.h,
 * PP_PEG_REDUCE_CORNERS): a brick wall's 1 mm joints keep one X per corner pair, and its LCP is
 * the standard model's size (crash wall: 5 272 unknowns, standard 4 824, 8 856 before). */
static void build_island(pp_world *world, int w, int island, double dt)
{
    pp_step_scratch *s = &world->scratch;
    pp_worker *worker = &s->workers[w];
    pp_island_outcome *out = &s->outcomes[island];
    const pp_pair *pairs = &s->pairs[s->island_pair_first[island]];
    int count = s->island_pair_first[island + 1] - s->island_pair_first[island];
    out->worker = out->built_by = w;
    out->set_first = worker->built.set_count;
    out->near_pairs = 0;
    out->reduced = island_at_rest(world, island, dt);
    worker->iw.unreduced = !out->reduced;
    worker->iw.dt = dt;
    out->status = pp_build_constraints(world, &worker->iw, pairs, count, world->config.model,
                                       &worker->built, &out->near_pairs);
    worker->iw.unreduced = 0;
    out->set_count = worker->built.set_count - out->set_first;
    out->contact_count = 0;
    for (int j = out->set_first; j < worker->built.set_count; ++j)
        out->contact_count += worker->built.sets[j].count;
}

/*
 * Which worker runs which island. Each worker owns a contiguous share of the job's positions
 * (worker w: positions [w n / T, (w + 1) n / T) of n, T workers), takes them from the front in
 * order, and when its share is done takes the others' from their back, one at a time, until
 * every share is empty. Results do not depend on it (they are merged in island order); what
 * does is where an island's data lives. The shares are the same for the constraints' job and
 * the time steps' job, and the same from one step to the next while the islands are, so an
 * island is built, solved and warm-started by the same worker step after step and its
 * contacts, LCP bases and workspace stay in that core's caches. Handed out by one shared
 * counter instead, consecutive islands ran on alternate workers, an island changed worker
 * between its build and its solve and from step to step, and every line of its data crossed
 * between the cores (a line's transfer costs ~200 ns on this project's machine: a round trip
 * of one atomic between the two vCPUs took 350-460 ns), and neighbouring islands' entries of
 * the per-island and per-body arrays were written from both cores at once
 * (docs/performance.md "Threads: islands kept on their worker").
 */
typedef struct island_share {
    _Alignas(64) atomic_ullong span; /* first position (low 32 bits) and end (high 32) */
} island_share;

typedef struct island_job {
    pp_world *world;
    double dt;
    const int *order;   /* NULL: islands 0..count-1 */
    int count;
    void (*run)(struct island_job *job, int worker, int island);
    int workers;        /* shares in use */
    int front;          /* the merges' copy jobs: islands before it are in place */
    island_share share[PP_MAX_THREADS];
} island_job;

/* The first position of a share, or -1 when it is empty (the owner's end). */
static int take_front(island_share *sh)
{
    unsigned long long v = atomic_load_explicit(&sh->span, memory_order_relaxed);
    for (;;) {
        unsigned first = (unsigned)v, end = (unsigned)(v >> 32);
        if (first >= end) return -1;
        if (atomic_compare_exchange_weak_explicit(&sh->span, &v, v + 1, memory_order_relaxed,
                                                  memory_order_relaxed))
            return (int)first;
    }
}

/* The last position of a share, or -1 when it is empty (another worker's end). */
static int take_back(island_share *sh)
{
    unsigned long long v = atomic_load_explicit(&sh->span, memory_order_relaxed);
    for (;;) {
        unsigned first = (unsigned)v, end = (unsigned)(v >> 32);
        if (first >= end) return -1;
        unsigned long long taken = (unsigned long long)(end - 1) << 32 | first;
        if (atomic_compare_exchange_weak_explicit(&sh->span, &v, taken, memory_order_relaxed,
                                                  memory_order_relaxed))
            return (int)(end - 1);
    }
}

static void run_island_job(void *arg, int worker)
{
    island_job *job = arg;
    for (int t; (t = take_front(&job->share[worker])) >= 0;)
        job->run(job, worker, job->order ? job->order[t] : t);
    for (int k = 1; k < job->workers; ++k) {
        island_share *other = &job->share[(worker + k) % job->workers];
        for (int t; (t = take_back(other)) >= 0;)
            job->run(job, worker, job->order ? job->order[t] : t);
    }
}

static void run_jobs(pp_world *world, island_job *job)
{
    pp_thread_pool *pool = world->scratch.pool;
    int parallel = job->count > 1 && pool;
    job->workers = parallel ? pp_thread_pool_size(pool) : 1;
    for (int w = 0; w < job->workers; ++w) {
        long long n = job->count, t = job->workers;
        unsigned long long first = (unsigned long long)(n * w / t);
        unsigned long long end = (unsigned long long)(n * (w + 1) / t);
        atomic_init(&job->share[w].span, end << 32 | first);
    }
    if (parallel) pp_thread_pool_run(pool, run_island_job, job);
    else run_island_job(job, 0);
}

static void build_island_job(island_job *job, int worker, int island)
{
    build_island(job->world, worker, island, job->dt);
}

/* Island i's sets, contacts and restitution copied from its builder's list into scratch.all
 * at the places build_constraints gave them, and its contacts' primary marks (a set's first
 * contact): what pp_constraint_list_append set after set and pp_constraint_list_index would
 * make of them. Run on the workers, each copying the islands of its share (run_island_job),
 * which it built, so an island's lists are read where they were written. */
static void copy_island_sets_job(island_job *job, int worker, int island)
{
    (void)worker;
    pp_step_scratch *s = &job->world->scratch;
    if (island < job->front) return;
    const pp_island_outcome *out = &s->outcomes[island];
    const pp_constraint_list *b = &s->workers[out->built_by].built;
    pp_constraint_list *all = &s->all;
    int c = out->merged_contact_first, d = s->island_set_first[island];
    for (int j = out->set_first; j < out->set_first + out->set_count; ++j, ++d) {
        const pp_peg_set *set = &b->sets[j];
        all->sets[d] = *set;
        all->sets[d].first = c;
        memcpy(&all->contacts[c], &b->contacts[set->first],
               (size_t)set->count * sizeof(pp_contact));
        memcpy(&all->restitution[3 * c], &b->restitution[3 * set->first],
               3 * (size_t)set->count * sizeof(double));
        if (set->count > 0) {
            memset(&all->primary[c], 0, (size_t)set->count);
            all->primary[c] = 1;
        }
        c += set->count;
    }
}

/* Island i's contact information copied from the list of the worker that stepped it into
 * scratch.info at the place time_step_islands gave it (on the workers, as the sets above). */
static void copy_island_info_job(island_job *job, int worker, int island)
{
    (void)worker;
    pp_step_scratch *s = &job->world->scratch;
    if (island < job->front) return;
    const pp_island_outcome *out = &s->outcomes[island];
    memcpy(&s->info[out->merged_contact_first], &s->workers[out->worker].info[out->info_first],
           (size_t)out->info_count * sizeof(pp_contact_info));
}

/* How many islands at the front of island order worker 0's `built` list holds as the merge
 * below would make of them, and nothing else: islands 0..k-1 built by worker 0, one after the
 * other, each set's contacts right after the previous set's (the builders leave no contact
 * outside a set). Its list then becomes the front of scratch.all by exchanging the two lists,
 * and only the other islands' sets are copied after it: with one thread every island (a copy
 * of every contact of the step streamed them through the caches twice more), with several the
 * islands of worker 0's share (run_island_job), the others' copied on the calling thread.
 * 0 when its list holds an island out of that order (one taken from another share). */
static int built_in_island_order(const pp_step_scratch *s)
{
    if (s->worker_count < 1) return 0;
    const pp_constraint_list *b = &s->workers[0].built;
    int sets = 0, k = 0;
    for (; k < s->island_count; ++k) {
        if (s->outcomes[k].built_by != 0 || s->outcomes[k].set_first != sets) break;
        sets += s->outcomes[k].set_count;
    }
    if (sets != b->set_count) return 0;
    int contacts = 0;
    for (int j = 0; j < b->set_count; ++j) {
        if (b->sets[j].first != contacts) return 0;
        contacts += b->sets[j].count;
    }
    return contacts == b->contact_count ? k : 0;
}

/* Stages 3-5 island by island on the workers, then merged in island order into scratch.all
 * (what stage 6b, PLUS, and the sub-step split read), island_set_first and the statistics. */
static pp_status build_constraints(pp_world *world, double dt)
{
    pp_step_scratch *s = &world->scratch;
    for (int w = 0; w < s->worker_count; ++w)
        s->workers[w].built.contact_count = s->workers[w].built.set_count = 0;
    island_job job = {.world = world, .dt = dt, .count = s->island_count, .run = build_island_job};
    run_jobs(world, &job);
    for (int i = 0; i < s->island_count; ++i)
        if (s->outcomes[i].status != PP_OK) return s->outcomes[i].status;
    pp_constraint_list *all = &s->all;
    int front = built_in_island_order(s), near = 0;
    if (front > 0) { /* worker 0's list is the front of the step's: exchanged, not copied */
        pp_constraint_list t = *all;
        *all = s->workers[0].built;
        s->workers[0].built = t;
    } else {
        all->contact_count = all->set_count = 0;
    }
    /* where the other islands' sets and contacts go, in island order */
    for (int i = 0; i < s->island_count; ++i) {
        pp_island_outcome *out = &s->outcomes[i];
        near += out->near_pairs;
        if (i < front) {
            s->island_set_first[i] = out->set_first;
            out->built_by = -1; /* its sets are scratch.all's now */
            continue;
        }
        s->island_set_first[i] = all->set_count;
        out->merged_contact_first = all->contact_count;
        all->set_count += out->set_count;
        all->contact_count += out->contact_count;
    }
    s->island_set_first[s->island_count] = all->set_count;
    if (front < s->island_count) {
        int nc = all->contact_count;
        pp_status st = pp_grow((void **)&all->sets, &all->set_capacity, all->set_count + 1,
                               sizeof(pp_peg_set));
        if (st == PP_OK) st = pp_grow((void **)&all->contacts, &all->contact_capacity, nc + 1,
                                      sizeof(pp_contact));
        if (st == PP_OK) st = pp_grow((void **)&all->restitution, &all->restitution_capacity,
                                      3 * nc + 3, sizeof(double));
        if (st == PP_OK) st = pp_grow((void **)&all->primary, &all->primary_capacity, nc + 1, 1);
        if (st != PP_OK) return st;
        island_job copy = {.world = world, .count = s->island_count, .front = front,
                           .run = copy_island_sets_job};
        run_jobs(world, &copy);
    }
    pp_constraint_stats(world, near);
    return PP_OK;
}

/* Island i's constraints at the sub-step's start: its sets as its builder left them, the same
 * sets and contacts as scratch.all's copy (island_set_first), read where they were written
 * (the worker that built the island usually steps it: run_island_job). */
static pp_status island_constraints(const pp_world *world, int island, pp_island_work *iw)
{
    const pp_step_scratch *s = &world->scratch;
    const pp_island_outcome *out = &s->outcomes[island];
    const pp_constraint_list *from = out->built_by < 0 ? &s->all : &s->workers[out->built_by].built;
    pp_constraint_list *l = &iw->list;
    l->contact_count = l->set_count = 0;
    pp_status st = PP_OK;
    for (int j = out->set_first; j < out->set_first + out->set_count && st == PP_OK; ++j) {
        const pp_peg_set *set = &from->sets[j];
        st = pp_constraint_list_append(l, set, &from->contacts[set->first],
                                       &from->restitution[3 * set->first]);
    }
    if (st == PP_OK) st = pp_constraint_list_index(l);
    iw->reduced = s->outcomes[island].reduced;
    return st;
}

/* One island's stages 7-8 on worker w: its constraints, LCP and re-linearisation, its bodies'
 * new velocities (islands share no dynamic body), and what must be merged later (contacts,
 * LCP bases, statistics) kept in the worker and its outcome. */
static void step_island(pp_world *world, int w, int island, double dt)
{
    pp_step_scratch *s = &world->scratch;
    pp_worker *worker = &s->workers[w];
    pp_island_work *iw = &worker->iw;
    pp_island_outcome *out = &s->outcomes[island];
    memset(&iw->stats, 0, sizeof iw->stats);
    pp_warm_store_clear(iw->warm);
    pp_peg_workspace_forget(iw->peg); /* the island's answers its own, whichever worker */
    for (int e = s->island_body_first[island]; e < s->island_body_first[island + 1]; ++e)
        pp_body_apply_external_impulse(&world->bodies[s->island_bodies[e]], s->gravity, dt);
    pp_status st = pp_island_select(world, island, iw);
    if (st == PP_OK) st = island_constraints(world, island, iw);
    if (st == PP_OK) st = pp_island_time_step(world, iw, dt);
    if (st == PP_OK) {
        for (int l = 0; l < iw->dynamic_count; ++l) {
            pp_body *b = &world->bodies[iw->body[l]];
            memcpy(b->v, &iw->velocity[6 * l], sizeof b->v);
            memcpy(b->w, &iw->velocity[6 * l + 3], sizeof b->w);
        }
        /* the joints' impulses over the step (dJointFeedback); rows are the island's own */
        for (int t = 0, r = 0; t < iw->joint_count; ++t) {
            const pp_joint *j = &world->joints[iw->joints[t]];
            for (int e = 0; e < j->row_count; ++e) world->joint_impulse[j->row_first + e] += iw->joint_impulse[r++];
        }
    }
    out->worker = w;
    out->info_first = worker->info_count;
    if (st == PP_OK)
        st = pp_record_contact_info(world, iw, &worker->info, &worker->info_count,
                                    &worker->info_capacity);
    if (st == PP_OK) pp_contact_feedback_add_island(world, iw); /* dJointFeedback */
    out->info_count = worker->info_count - out->info_first;
    if (st == PP_OK && iw->warm) st = pp_warm_store_merge(worker->warm, iw->warm);
    if (st == PP_OK) /* stage 8 for the island's bodies (integrate_bodies) */
        for (int e = s->island_body_first[island]; e < s->island_body_first[island + 1]; ++e)
            pp_body_integrate_pose(&world->bodies[s->island_bodies[e]], dt);
    if (st == PP_OK) pp_island_apply_projection(world, iw); /* stage_project.c */
    out->stats = iw->stats;
    out->status = st;
}

static void step_island_job(island_job *job, int worker, int island)
{
    step_island(job->world, worker, island, job->dt);
}

/* What one island's solves did, into the step's statistics: sizes summed over the islands
 * (the largest kept too), pivots and counters summed; of the answers applied to the bodies,
 * the first failure's status and the worst residual and fallback; the solves short of a
 * solution whose answer was not applied (stage_time_step.c, "What an island's solves
 * report"). */
static void merge_island_stats(pp_step_stats *t, const pp_island_stats *is)
{
    const pp_answer *a = &is->applied;
    t->lcp_size += is->lcp_size;
    if (is->lcp_largest > t->lcp_largest) t->lcp_largest = is->lcp_largest;
    if (t->lcp_status == 0) t->lcp_status = a->status;
    t->lcp_pivots += is->lcp_pivots;
    t->lcp_factor_refused += is->lcp_factor_refused;
    if (a->residual > t->lcp_residual) t->lcp_residual = a->residual;
    if (a->fallback > t->lcp_fallback) t->lcp_fallback = a->fallback;
    t->lcp_dropped += is->failed - a->failed;
    t->lcp_solves += is->solves;
    t->lcp_warm_solves += is->lcp_warm;
    t->peg_fallback += is->peg_fallback;
    if (is->peg_declined_largest > t->peg_declined_largest)
        t->peg_declined_largest = is->peg_declined_largest;
    t->relinearizations += is->relinearizations;
    t->relinearize_refused += is->relinearize_refused;
    t->relinearize_over += is->relinearize_over;
    t->positions_projected += is->positions_projected;
    if (is->projection_largest > t->projection_largest)
        t->projection_largest = is->projection_largest;
    t->relinearize_cut += is->relinearize_cut;
    t->islands_failed += a->fallback == 3;
    t->lcp_approximate += a->fallback == 2;
    t->joint_regularised += is->joint_regularised;
    t->load_shared += is->load_shared;
    t->load_kept += is->load_kept;
    t->lcp_screened += is->lcp_screened;
}

/* Workers, outcomes and per-island arrays for this sub-step (and the pool when
 * pp_config.threads changed). */
static pp_status prepare_workers(pp_world *world)
{
    pp_step_scratch *s = &world->scratch;
    int threads = world->config.threads, islands = s->island_count, nb = world->body_count;
    pp_status st = PP_OK;
    if (pp_thread_pool_size(s->pool) != threads) {
        pp_thread_pool_destroy(s->pool);
        s->pool = NULL;
        if (threads > 1) st = pp_thread_pool_create(threads, &s->pool);
        if (st != PP_OK) return st;
    }
    if (s->worker_count < threads) {
        pp_worker *w = realloc(s->workers, (size_t)threads * sizeof *w);
        if (!w) return PP_ERR_NO_MEMORY;
        memset(w + s->worker_count, 0, (size_t)(threads - s->worker_count) * sizeof *w);
        s->workers = w;
        s->worker_count = threads;
    }
    for (int i = 0; i < threads && st == PP_OK; ++i) {
        pp_worker *w = &s->workers[i];
        if (!w->warm) st = pp_warm_store_create(&w->warm);
        if (st == PP_OK && i > 0 && !w->warm_prev) st = pp_warm_store_create(&w->warm_prev);
        if (st == PP_OK && !w->iw.warm) st = pp_warm_store_create(&w->iw.warm);
    }
    void **const per_island[] = {(void **)&s->outcomes, (void **)&s->island_set_first,
                                 (void **)&s->island_order};
    const size_t sizes[] = {sizeof(pp_island_outcome), sizeof(int), sizeof(int)};
    if (st == PP_OK) st = pp_grow_together(per_island, sizes, 3, &s->outcome_capacity, islands + 1);
    if (st == PP_OK) st = pp_grow((void **)&s->body_mark, &s->body_mark_capacity, 2 * nb + 1, sizeof(int));
    return st;
}

/* The order islands run in: first those that may run in parallel, then those that touch a
 * kinematic body some other island touches too (re-linearising both would pose that body
 * concurrently), run one after the other on worker 0. Returns the parallel count. */
static int order_islands(pp_world *world)
{
    pp_step_scratch *s = &world->scratch;
    int nb = world->body_count, islands = s->island_count;
    int *last = s->body_mark, *count = s->body_mark + nb;
    for (int b = 0; b < nb; ++b) {
        last[b] = -1;
        count[b] = 0;
    }
    for (int i = 0; i < islands; ++i)
        for (int k = s->island_pair_first[i]; k < s->island_pair_first[i + 1]; ++k) {
            int ends[2] = {s->shape_body[s->pairs[k].a], s->shape_body[s->pairs[k].b]};
            for (int e = 0; e < 2; ++e) {
                int b = ends[e];
                if (b < 0 || world->bodies[b].inv_mass > 0.0 || last[b] == i) continue;
                last[b] = i;
                count[b]++;
            }
        }
    int parallel = 0, serial = islands;
    for (int i = islands - 1; i >= 0; --i) {
        int shared = 0;
        for (int k = s->island_pair_first[i]; k < s->island_pair_first[i + 1] && !shared; ++k) {
            int ends[2] = {s->shape_body[s->pairs[k].a], s->shape_body[s->pairs[k].b]};
            for (int e = 0; e < 2; ++e)
                shared |= ends[e] >= 0 && world->bodies[ends[e]].inv_mass == 0.0 && count[ends[e]] > 1;
        }
        s->outcomes[i].worker = shared ? -1 : 0; /* a mark until the island runs */
        if (shared) s->island_order[--serial] = i;
    }
    for (int i = 0; i < islands; ++i)
        if (s->outcomes[i].worker == 0) s->island_order[parallel++] = i;
    return parallel;
}

/* How many islands at the front of island order worker 0's contact list holds as the step's
 * first contacts, and nothing else: islands 0..k-1 stepped by worker 0, successfully, one after
 * the other (build_constraints does the same with the constraint lists). */
static int contacts_in_island_order(const pp_step_scratch *s)
{
    if (s->worker_count < 1) return 0;
    int total = 0, k = 0;
    for (; k < s->island_count; ++k) {
        const pp_island_outcome *out = &s->outcomes[k];
        if (out->status != PP_OK || out->worker != 0 || out->info_first != total) break;
        total += out->info_count;
    }
    return total == s->workers[0].info_count ? k : 0;
}

/* The workers' stores (`kept` 0: warm, 1: warm_kept) exchanged with the previous ones
 * (scratch.warm_prev, the workers' warm_prev), which are chained again, worker 0's first. */
static void exchange_warm_stores(pp_step_scratch *s, int kept)
{
    const struct pp_warm_store *more = NULL;
    for (int w = s->worker_count - 1; w >= 0; --w) {
        pp_worker *k = &s->workers[w];
        struct pp_warm_store **prev = w > 0 ? &k->warm_prev : &s->warm_prev;
        struct pp_warm_store **with = kept ? &k->warm_kept : &k->warm;
        struct pp_warm_store *t = *prev;
        *prev = *with;
        *with = t;
        pp_warm_store_chain(*prev, more);
        more = *prev;
    }
}

/* A failed step leaves the warm start as the last successful step left it: the bases its
 * first sub-step read are put back where a sub-step's exchange moved them (the workers'
 * warm after the first sub-step; from the second on, warm_kept). */
static void warm_start_undo(pp_step_scratch *s)
{
    if (s->warm_swaps > 0) exchange_warm_stores(s, s->warm_kept);
    s->warm_model = s->warm_model_start;
}

/* Stages 7-8 island by island, on pp_config.threads workers: each island's LCP and
 * re-linearisation on its own bodies and pairs, in memory sized by the island. Then, in
 * island order whichever worker ran it, its contacts go to the contact list, its statistics
 * to the step's and its LCP bases to the next sub-step's warm start; so the result is the
 * same bit for bit for any number of threads. */
static pp_status time_step_islands(pp_world *world, double dt)
{
    pp_step_scratch *s = &world->scratch;
    pp_status st = PP_OK;
    if (!s->warm_prev) st = pp_warm_store_create(&s->warm_prev);
    if (st != PP_OK) return st;
    if (s->warm_swaps == 1 && !s->warm_kept) { /* a second sub-step: the step's first */
        for (int w = 0; w < s->worker_count && st == PP_OK; ++w) { /* stores are kept */
            pp_worker *k = &s->workers[w];
            if (!k->warm_kept) st = pp_warm_store_create(&k->warm_kept);
        }
        if (st != PP_OK) return st;
        for (int w = 0; w < s->worker_count; ++w) {
            pp_worker *k = &s->workers[w];
            struct pp_warm_store *t = k->warm_kept;
            k->warm_kept = k->warm;
            k->warm = t;
        }
        s->warm_kept = 1;
    }
    for (int w = 0; w < s->worker_count; ++w) {
        s->workers[w].info_count = 0;
        pp_warm_store_clear(s->workers[w].warm);
    }
    int parallel = order_islands(world);

    island_job job = {.world = world, .dt = dt, .order = s->island_order, .count = parallel,
                       .run = step_island_job};
    run_jobs(world, &job);
    for (int t = parallel; t < s->island_count; ++t) step_island(world, 0, s->island_order[t], dt);

    s->info_count = 0;
    int front = contacts_in_island_order(s);
    if (front > 0) { /* worker 0's contact list is the front of the step's: exchanged */
        pp_worker *w = &s->workers[0];
        pp_contact_info *t = s->info;
        int capacity = s->info_capacity;
        s->info = w->info;
        s->info_capacity = w->info_capacity;
        s->info_count = w->info_count;
        w->info = t;
        w->info_capacity = capacity;
        w->info_count = 0;
    }
    for (int i = 0; i < s->island_count; ++i) {
        pp_island_outcome *out = &s->outcomes[i];
        if (out->status != PP_OK) return out->status;
        merge_island_stats(&world->stats, &out->stats);
        if (i < front) continue;
        out->merged_contact_first = s->info_count;
        s->info_count += out->info_count;
    }
    if (front < s->island_count) {
        st = pp_grow((void **)&s->info, &s->info_capacity, s->info_count + 1,
                     sizeof(pp_contact_info));
        if (st != PP_OK) return st;
        island_job copy = {.world = world, .count = s->island_count, .front = front,
                           .run = copy_island_info_job};
        run_jobs(world, &copy);
    }
    /* this sub-step's bases become the previous ones: each worker's store as it is
     * (exchanged), worker 0's first and the others' chained after it. A set's identity belongs
     * to one island, so no key is in two stores, and a lookup finds what a merge of them would
     * hold (the merge of every worker's store into one cost the calling thread ~4 % of a
     * 2-thread step on islands100, docs/performance.md "Threads") */
    exchange_warm_stores(s, 0);
    s->warm_model = world->config.model;
    s->warm_swaps++;
    world->stats.lcp_warm_started = world->stats.lcp_solves > 0 &&
                                    world->stats.lcp_warm_solves == world->stats.lcp_solves;
    return st;
}

/* island i's pp_time_to_impact: its sets' and contacts' times, the least kept in its outcome */
static void time_to_impact_job(island_job *job, int worker, int island)
{
    (void)worker;
    pp_step_scratch *s = &job->world->scratch;
    s->outcomes[island].impact_time =
        pp_time_to_impact(job->world, s->gravity, s->island_set_first[island],
                          s->island_set_first[island + 1], job->dt);
}

/* The end of the sub-step (impact_stage.c pp_time_to_impact) taken island by island on the
 * workers, in the shares the islands are built and stepped in, then the least of the islands'
 * on the calling thread: a least is the same double in any order, so the same as
 * pp_time_to_impact over scratch.all, whose sets are the islands' in island order (its cost,
 * 3 % of the instructions of a step of islands100, was the largest stretch of the step on the
 * calling thread alone: docs/performance.md "Threads: the end of the sub-step on the
 * workers"). */
static double time_to_impact(pp_world *world, double remaining)
{
    pp_step_scratch *s = &world->scratch;
    dVector3 g;
    dWorldGetGravity(world->ode_world, g);
    for (int k = 0; k < 3; ++k) s->gravity[k] = g[k];
    island_job job = {.world = world, .dt = remaining, .count = s->island_count,
                      .run = time_to_impact_job};
    run_jobs(world, &job);
    double t_first = remaining;
    for (int i = 0; i < s->island_count; ++i)
        if (s->outcomes[i].impact_time < t_first) t_first = s->outcomes[i].impact_time;
    return t_first;
}

/* A step is one sub-step unless a bouncing contact closes during it (then it is split at the
 * moment of touch so PLUS sees the true approach velocity) or a fast pair would be carried
 * past half the thinner shape's width (split at its touch, then in pieces that move it at most
 * that far): impact_stage.c pp_time_to_impact. */
#define PP_MAX_SUBSTEPS 16

/*
 * A sub-step redone shorter. Where an island's re-linearisation converges to a fixed point
 * above the step's energy bound and no estimate within the bound is as feasible
 * (relinearize.c energy_bounded_fixed_point, relinearize_over), energy and non-penetration
 * cannot both hold at that sub-step's length: a corner comes over a face within the sub-step,
 * an impact along a normal no constraint at its start describes. The step is then run again
 * from its start (the failure path puts everything back: pegplus_step) with that sub-step
 * halved, up to PP_RETRY_HALVINGS times a sub-step and PP_RETRY_RUNS runs a step; the rest of
 * the step goes on as sub-steps do. A sub-step still above its bound after its halvings is kept
 * (its count stays in relinearize_over). Earlier sub-steps run again give the same bits, so a
 * step no island of which keeps such a fixed point is not touched (docs/performance.md "The
 * standard model's fixed point above the energy bound: a sub-step redone shorter").
 */
#define PP_RETRY_HALVINGS 3
#define PP_RETRY_RUNS 8

typedef struct substep_plan {
    int halvings[PP_MAX_SUBSTEPS + 1]; /* by sub-step number: the sub-step's length halved */
    int runs;                          /* runs of the step so far, less one */
    int again;                         /* this run stopped to be run again */
} substep_plan;

/* Stage 1c, ODE's auto-disable (stage_auto_disable.c): bodies idle long enough sleep, bodies
 * an awake body touches wake; while that changes which bodies are stepped, stages 1-6 run
 * again for the bodies stepped now. */
static pp_status auto_disable(pp_world *world, double h, double *clock)
{
    int changed = 0;
    pp_status st = pp_auto_disable_sleep(world, h);
    if (st == PP_OK) st = pp_auto_disable_wake(world, &changed);
    while (st == PP_OK && changed) {
        st = snapshot_bodies(world, h);
        if (st == PP_OK) st = pp_bridge_shapes(world);
        if (st == PP_OK) st = find_contacts(world, h, clock);
        if (st == PP_OK) st = pp_auto_disable_wake(world, &changed);
    }
    return st;
}

static pp_status pegplus_substeps(pp_world *world, double h, substep_plan *plan);

/* What a run of the step changed outside the step's own copy, put back: the auto-disable
 * stage's changes, the force accumulators joints' getInfo2 changed, the warm starts. */
static void undo_run(pp_world *world)
{
    pp_auto_disable_undo(world);
    pp_bridge_restore_accumulators(world);
    warm_start_undo(&world->scratch);
}

/* A failed step leaves ODE as it was (pegplus.h pp_world_step): nothing is written to the
 * bodies before stage 9, which writes all or nothing; the auto-disable stage's changes and
 * the force accumulators joints' getInfo2 changed are put back. An island's bodies are
 * integrated in its job, but into the step's own copy (world->bodies), read afresh from ODE
 * at the next step: a failing island leaves the islands solved beside it no trace. */
static pp_status pegplus_step(pp_world *world, double h)
{
    pp_step_scratch *s = &world->scratch;
    s->warm_swaps = s->warm_kept = 0;
    s->warm_model_start = s->warm_model;
    substep_plan plan;
    memset(&plan, 0, sizeof plan);
    pp_status st = pegplus_substeps(world, h, &plan);
    while (st == PP_OK && plan.again) { /* "A sub-step redone shorter": back to the start */
        undo_run(world);
        s->warm_swaps = s->warm_kept = 0;
        s->info_count = s->impact_info_count = 0;
        pp_step_stats kept = world->stats; /* the times spent so far stay counted */
        memset(&world->stats, 0, sizeof world->stats);
        world->stats.model = kept.model;
        memcpy(world->stats.time_stage, kept.time_stage, sizeof kept.time_stage);
        plan.again = 0;
        plan.runs++;
        world->stats.substeps_retried = plan.runs;
        st = pegplus_substeps(world, h, &plan);
    }
    if (st == PP_OK) {
        pp_auto_disable_commit(world);
    } else {
        undo_run(world);
    }
    world->saved_count = 0;
    s->warm_swaps = s->warm_kept = 0;
    return st;
}

static pp_status pegplus_substeps(pp_world *world, double h, substep_plan *plan)
{
    double clock = pp_now_seconds();
    pp_status st = snapshot_bodies(world, h);                       /* 1. snapshot      */
    if (st == PP_OK) st = pp_bridge_shapes(world);
    mark(world, PP_STAGE_SNAPSHOT, &clock);
    if (st != PP_OK) return st;

    double t = 0.0;
    world->scratch.impacts = 0;
    if (plan->runs == 0) pp_near_probe_clear(world); /* the callback is asked afresh every */
    else pp_near_probe_rerun(world);                 /* step, once                          */
    double min_gap = 0.0; /* over the sub-steps' starts (pp_step_stats.min_gap) */
    for (int sub = 1; t < h && st == PP_OK; ++sub) {
        double dt = h - t;
        st = find_contacts(world, dt, &clock);                      /* 2-6              */
        if (sub == 1 || world->stats.min_gap < min_gap) min_gap = world->stats.min_gap;
        if (st == PP_OK && sub == 1) st = auto_disable(world, h, &clock); /* 1c. sleep/wake */
        if (st != PP_OK) return st;

        int impacts = world->scratch.impacts, impact_info = world->scratch.impact_info_count;
        st = pp_stage_impact(world, dt);                            /* 6b. impact (PLUS) */
        if (st == PP_OK) pp_contact_feedback_add_impacts(world, impact_info);
        mark(world, PP_STAGE_IMPACT, &clock);
        if (st != PP_OK) return st;
        if (world->scratch.impacts != impacts) {
            st = find_contacts(world, dt, &clock); /* new velocities, new reach */
            if (st != PP_OK) return st;
        }
        if (sub < PP_MAX_SUBSTEPS) dt = ldexp(time_to_impact(world, dt), -plan->halvings[sub]);

        const int over = world->stats.relinearize_over;
        time_step_free(world, dt);                                  /* 7. time step     */
        st = time_step_islands(world, dt);
        mark(world, PP_STAGE_TIME_STEP, &clock);
        if (st != PP_OK) return st;
        if (world->stats.relinearize_over > over && sub < PP_MAX_SUBSTEPS &&
            plan->halvings[sub] < PP_RETRY_HALVINGS && plan->runs + 1 < PP_RETRY_RUNS) {
            plan->halvings[sub]++; /* "A sub-step redone shorter" */
            plan->again = 1;
            return PP_OK;
        }

        integrate_bodies(world, dt);                                /* 8. integrate     */
        mark(world, PP_STAGE_INTEGRATE, &clock);
        t = dt == h - t ? h : t + dt;
        world->stats.substeps = sub;
    }
    world->stats.impacts = world->scratch.impacts;
    world->stats.min_gap = min_gap;

    st = pp_bridge_check_result(world);                             /* 9. write back:   */
    if (st == PP_OK) {                                              /* all or nothing   */
        pp_joint_feedback(world, h);
        pp_contact_feedback_write(world, h);
        pp_bridge_write_back(world);
    }
    mark(world, PP_STAGE_WRITE_BACK, &clock);
    return st;
}

/* PP_MODEL_ODE: what ODE will read is checked as strictly as the pegplus models check it (the
 * world in pp_world_step; here the bodies by the same snapshot and the geoms; the surfaces
 * and contacts in ode_baseline.c) before ODE is touched. */
static pp_status ode_step(pp_world *world, double h)
{
    pp_status st = pp_bridge_collect(world);
    if (st == PP_OK) st = pp_bridge_snapshot(world, h);
    if (st == PP_OK) st = pp_bridge_validate_geoms(world);
    if (st != PP_OK) return st;
    world->stats.bodies = world->body_count;
    world->stats.shapes = world->geom_count;
    return world->near_callback ? pp_ode_program_callback_step(world, h)
                                : pp_ode_baseline_step(world, h);
}

pp_status pp_world_step(pp_world *world, double h)
{
    pp_status st = check_world(world, "pp_world_step");
    if (st != PP_OK) return st;
    /* the contact and impact lists describe the last step, whatever the model: none yet */
    world->scratch.info_count = 0;
    world->scratch.impact_info_count = 0;
    if (!(h >= PP_MIN_STEP && h <= PP_MAX_STEP)) {
        pp_log(PP_LOG_ERROR, "pp_world_step: step size h must be in [%g, %g] s (got %g)",
               PP_MIN_STEP, PP_MAX_STEP, h);
        return PP_ERR_INVALID_ARGUMENT;
    }
    st = pp_bridge_validate_world(world);
    if (st != PP_OK) return st;
    memset(&world->stats, 0, sizeof world->stats);
    world->stats.model = world->config.model;
    double start = pp_now_seconds();
    st = world->config.model == PP_MODEL_ODE ? ode_step(world, h) : pegplus_step(world, h);
    world->stats.time_total = pp_now_seconds() - start;
    world->stats.status = st;
    if (st != PP_OK) { /* a failed step lists no contacts and no impacts (pegplus.h) */
        world->scratch.info_count = 0;
        world->scratch.impact_info_count = 0;
    }
    return st;
}
