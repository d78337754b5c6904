/* Private to plugin/: the pegplus world and the plain-data body snapshot. */
#ifndef PP_PLUGIN_WORLD_INTERNAL_H
#define PP_PLUGIN_WORLD_INTERNAL_H

#include "pegplus/pegplus.h"

#include <stdint.h>
#include "pegplus/geometry.h"
#include "pegplus/mlcp.h"
#include "pegplus/peg.h"

/* One managed ODE body, copied out of ODE at the start of a step (stage 1) and written
 * back at its end (stage 9). Matrices are 3x3 row-major; everything in the world frame
 * unless the name says body frame. */
typedef struct pp_body {
    dBodyID id;
    double mass, inv_mass;     /* inv_mass = 0 for kinematic bodies */
    double inertia_body[9];    /* body-frame inertia about the centre of mass */
    double inv_inertia_body[9];
    double inv_inertia_world[9];
    double x[3], q[4], R[9];   /* position, orientation (w,x,y,z), rotation */
    double v[3], w[3];         /* linear and angular velocity */
    double force[3], torque[3];/* user accumulators (without gravity) */
    int gravity, gyroscopic, kinematic;
    int finite_rotation, finite_rotation_axis_set;
    double finite_rotation_axis[3];
    double linear_damping, angular_damping;             /* 0 = off */
    double linear_threshold2, angular_threshold2;       /* squared speed thresholds */
    double max_angular_speed;                           /* dInfinity = off */
} pp_body;

/* A body's force and torque accumulators as the program left them before the step
 * (ode_bridge.c pp_bridge_save_accumulators). */
typedef struct pp_saved_accumulator {
    dBodyID body;
    double force[3], torque[3];
} pp_saved_accumulator;

/* One enabled ODE joint in the step (stage_joints.c), its bodies in ODE's internal order
 * (b1 = the body it acts on first, never 0; b2 = -1 for the static world, or a body pegplus
 * does not step) and its rows in world->joint_rows. */
typedef struct pp_joint {
    dJointID id;
    int body_a, body_b;
    int row_first, row_count;
    /* the bodies' poses the rows were built at (the step's start): an impact later in the
     * step carries the rows to the bodies' poses then (impact_stage.c) */
    double x_start[2][3];          /* centres of body_a, body_b (unset for -1) */
    double R_start[9];             /* rotation of body_a (unset for -1) */
} pp_joint;

/* A convex geom whose polytope pegplus recorded (ODE has no getter for dConvex data). */
typedef struct pp_convex_record {
    dGeomID geom;
    int owned;                 /* created by pp_convex_create: destroyed with the world */
    double *planes;            /* ODE arrays that must outlive the geom (owned == 1) */
    double *points;
    unsigned *polygons;
    int ode_vertex_count;      /* points in ODE's arrays: the hull's, or at most
                                  PP_ODE_CONVEX_MAX_VERTICES of them (convex.c) */
    struct pp_polytope *polytope;
} pp_convex_record;

/* A shape's pose in its body's frame: world = R_b (R p_local) ... i.e. position
 * x_b + R_b p, rotation R_b R. */
typedef struct pp_shape_attachment {
    double p[3];
    double R[9];
} pp_shape_attachment;

/* A list of constraint sets on feature contacts (stage 5): the sets index `contacts`; each
 * contact has 3 restitution values (the pair's bounce = PLUS e_min, bounce_vel = v_capture,
 * v_plastic) and primary[c] = 1 when it is the first contact of its set (the one that carries
 * an impulse, PEG Eq 41; every contact of the standard model is its own U set). */
typedef struct pp_constraint_list {
    pp_contact *contacts;
    int contact_count, contact_capacity;
    double *restitution;
    int restitution_capacity;
    pp_peg_set *sets;
    int set_count, set_capacity;
    unsigned char *primary;
    int primary_capacity;
} pp_constraint_list;

struct pp_warm_store;

/* A hash index of the sets of a constraint list by their feature pairs (relinearize.c), to
 * find a set with the same feature pairs in O(1); grown to the peak and reused. */
typedef struct pp_set_index {
    int *slot;                     /* set index + 1, 0 = empty */
    uint64_t *hash;                /* per slot */
    int capacity;
} pp_set_index;

/* The LCP answer behind velocities of an island (stage_time_step.c record_lcp): its pp_lcp
 * status (0 a solution to the acceptance of pegplus/lcp.h), its fallback level
 * (pp_step_stats.lcp_fallback), its natural-map residual, and how many solves short of a
 * solution (no answer, or the bounded fallback's approximate one) it comes from. A
 * re-linearisation's damped estimate combines the answers of several solves
 * (pp_answer_combine). */
typedef struct pp_answer {
    int status, fallback, failed;
    double residual;
} pp_answer;

/* What an island's LCP solves did, merged into pp_step_stats in island order. `applied`: the
 * answer its bodies' velocities were taken from; worst_status and worst_fallback: over all
 * its solves so far, the first failure's status and the highest fallback level (read by
 * relinearize.c's rule for iterates answered approximately); failed: the solves short of a
 * solution, applied or not. */
typedef struct pp_island_stats {
    int lcp_size, lcp_largest, lcp_pivots, lcp_warm;
    int lcp_factor_refused;
    pp_answer applied;
    int worst_status, worst_fallback, failed;
    int peg_fallback, relinearizations, relinearize_refused, relinearize_cut, solves;
    int relinearize_over; /* a converged fixed point kept above the energy bound */
    int positions_projected;   /* post-stabilised (stage_project.c) */
    double projection_largest; /* its largest displacement of a body point, m */
    int peg_declined_largest;
    int joint_regularised;
    int load_shared, load_kept;
    int lcp_screened;
} pp_island_stats;

/*
 * One contact island's time step (docs/design.md "One step", per island): its bodies, its
 * candidate pairs, its constraints, the LCP and the ST96 §3.6 re-linearisation, all in memory
 * sized by the island (it grows to the largest island seen and is reused for the next one, so
 * the step's memory is that of its largest island, never of the whole world's contacts).
 *
 * Bodies are numbered locally 0..body_count-1 (body[] maps to world->bodies; kinematic bodies
 * the island's pairs touch are listed too, after the dynamic ones, so the re-linearisation
 * poses them at the predicted pose): velocities, estimates and saved poses are per local
 * body. Contacts keep world body and shape indices; the LCP gets a copy in local indices.
 */
typedef struct pp_island_work {
    int *body;                     /* local -> world body index */
    int body_count, dynamic_count, body_capacity;
    const pp_pair *pairs;          /* the island's candidate pairs (shape indices) */
    int pair_count;
    const int *joints;             /* the island's joints (world->joints indices) */
    int joint_count;
    pp_joint_row *joint_rows;      /* their rows with local body indices */
    double *joint_impulse;         /* the rows' impulses of the last solve */
    int joint_row_count, joint_row_capacity;

    pp_constraint_list list;       /* the constraints being solved (q^l, then each q^) */
    pp_constraint_list work;       /* the re-linearisation's working set (ST96 §4) */
    pp_set_index set_index[2];     /* of the sets built at q^ and of the working set */
    pp_constraint_list ordered;    /* list rewritten in the working set's order (relinearize.c) */
    int one_order;                 /* 1: this step's iterates' lists in that order */
    int *work_place;               /* per working set: its index in list, or -1 */
    unsigned char *work_mark;      /* per working set: WORK_PUSHED, WORK_LISTED (relinearize.c
                                      pair_bound) */
    int work_mark_capacity;
    void *bound_rank;              /* pair_bound's ranking of the list's sets (relinearize.c) */
    int *bound_place;              /* and each set's mark, then its new place in the list */
    int bound_rank_capacity, bound_place_capacity;
    pp_pair *own_pairs;            /* pairs, copied here when a predicted pose adds pairs */
    int own_pair_capacity;
    int work_place_capacity;
    int work_model;                /* the model whose sets `work` holds */
    int unreduced;                 /* PEG sets built without removing implied ones
                                      (pp_peg_params.reduce = 0): moving islands and the
                                      re-linearisation */
    int reduced;                   /* list's sets at q^l had implied ones removed (an island
                                      at rest at the start of the step, world.c) */
    int declined;                  /* the last PEG solve declined the island (peg_mlcp.c
                                      "Declined islands"; stage_time_step.c) */
    double dt;                     /* the sub-step being built and solved */
    int recovering;                /* a solve at the step's start pose raised a set deeper than
                                      max_correcting_velocity h to that bound
                                      (pp_peg_stats.recovered_sets): not re-linearised */

    pp_peg_builder *peg_builder;   /* stage 5 under PP_MODEL_PEG */
    double *pose_work;             /* posed polytope views of the pair being classified */
    int pose_work_capacity;

    /* The LCP (pegplus/peg.h; the standard model is PEG with U sets only). */
    pp_peg_workspace *peg;
    int peg_bodies, peg_contacts, peg_sets, peg_directions;
    pp_mlcp_body *mlcp_body;       /* local bodies: free velocity nu*, centre (q^l or q^) */
    pp_contact *local_contacts;    /* list.contacts with local body indices */
    double *normal_impulse, *friction_vector, *slack;
    double *velocity;              /* 6 per local body: nu^{l+1} of the last solve */
    double *solve_x;               /* 3 per local body: the centres the last solve's Jacobians
                                      used (q^l, or a re-linearisation's q^) */
    unsigned char *basis;
    double *z_start;               /* the sticking solve's start, like basis (warm_start.c) */
    double *z_fallback;            /* an iterate's fallback candidate, like z_start */
    int contact_capacity, body_array_capacity, basis_capacity, z_start_capacity;
    int z_fallback_capacity;
    struct pp_warm_store *warm;    /* this island's latest bases, by constraint identity */

    /* ST96 §3.6 re-linearisation, 6 (16 for poses) per local body */
    double *nu_hat, *nu_kept, *pose_saved;
    double *pose_projected;        /* 16 per local body: the end pose post-stabilisation
                                      moved it to (stage_project.c), when `projected` */
    int projected;

    /* The re-linearisation's last iterates, to tell a cycle (relinearize.c "A cycle"): the
     * estimates nu^ and the solves' answers F(nu^) of the last PP_RELIN_PERIOD_MAX iterates,
     * 12 PP_RELIN_PERIOD_MAX per local body */
    double *orbit;

    pp_island_stats stats;         /* what the island's solves did */
    pp_answer answer;              /* the last solve's answer (pp_island_solve: the answer in
                                      velocity) */
    pp_lcp_budget budget;          /* shared by the island's solves in a step */
    double budget_half;            /* pp_lcp_clock() time after which the re-linearisation
                                      starts no new iteration */
} pp_island_work;

/* One worker of the time step (pp_config.threads): its island work, and what the islands it
 * stepped produced, kept until they are merged in island order. */
typedef struct pp_worker {
    pp_island_work iw;
    pp_constraint_list built;      /* stages 3-5 of its islands, one after the other */
    pp_contact_info *info;         /* the contacts of its islands, one after the other */
    int info_count, info_capacity;
    struct pp_warm_store *warm;    /* the LCP bases of its islands */
    struct pp_warm_store *warm_prev; /* workers 1..: theirs of the previous sub-step, chained
                                      after scratch.warm_prev (worker 0's is that store) */
    struct pp_warm_store *warm_kept; /* from a step's second sub-step on: the store its first
                                      read (worker 0: scratch.warm_prev's), put back if the
                                      step fails (world.c); otherwise a spare */
    char apart[64];                /* no cache line shared with the next worker's iw, which
                                      another core writes (pp_worker is realloc'ed, so it is
                                      kept apart by padding, not by alignment) */
} pp_worker;

/* What one island's step produced (filled by the worker that ran it). */
typedef struct pp_island_outcome {
    pp_status status;
    int worker, info_first, info_count;
    int set_first, set_count, near_pairs; /* stages 3-5: its sets in the worker's `built` */
    int built_by;                  /* the worker whose `built` holds them, -1: scratch.all
                                      (worker 0's list became it, world.c build_constraints) */
    int contact_count;             /* the contacts of its sets */
    int merged_contact_first;      /* where its contacts go in scratch.all (contacts) and in
                                      scratch.info (contact information) */
    int reduced;                   /* built with implied sets removed (at rest) */
    double impact_time;            /* pp_time_to_impact over its sets (world.c) */
    pp_island_stats stats;
} pp_island_outcome;

typedef struct pp_thread_pool pp_thread_pool;

/* Per-step arrays of stages 2-8: they grow to the peak and are reused (docs/style.md "Memory"). */
typedef struct pp_step_scratch {
    pp_shape *shapes;              /* stage 1: managed geoms as posed shapes */
    dGeomID *shape_geom;
    int *shape_body;               /* index into world->bodies, -1 = static */
    double *shape_motion;          /* h (|v| + |w| r): how far the shape can move in the step */
    pp_shape_attachment *attachment; /* body-frame pose of shapes on bodies */
    pp_aabb *aabbs;
    unsigned char *is_static;
    int *static_shapes;            /* stage 2: the static shapes other than planes, and */
    pp_aabb *static_aabbs;         /* their boxes grown by eps/2 (relinearize.c) */
    int static_count, static_capacity;
    const struct pp_terrain **shape_terrain; /* a terrain triangle's terrain, else NULL */
    int *shape_triangle;           /* its triangle */
    int shape_count, shape_capacity;
    int geom_shape_count;          /* shapes of geoms; terrain triangles follow (terrain_ode.c) */
    int *terrain_hits;             /* stage 2 scratch: triangles near a moving shape */
    int terrain_hit_capacity;
    int *body_shape_first;         /* CSR of the shapes on each body (nb + 1) */
    int *body_shapes;
    int body_shape_capacity, body_shape_first_capacity;

    pp_broadphase *broadphase;
    int *sap_index;                /* shape index of each broadphase box (planes are not boxed) */
    int sap_capacity;
    pp_pair *pairs;                /* candidate pairs, shape indices (stage 2), grouped by
                                      island after stage 6 */
    int pair_count, pair_capacity;
    pp_pair *pair_sorted;          /* counting-sort buffer */
    int pair_sorted_capacity;

    /* Stage 6: islands, the connected components of dynamic bodies through candidate pairs
     * (static geometry and kinematic bodies join nothing). */
    int island_count;
    int *island_of_body;           /* nb: island of each body, -1 none (not dynamic or alone) */
    int *island_pair_first;        /* island_count + 1: CSR into pairs */
    int *island_body_first;        /* island_count + 1: CSR into island_bodies */
    int *island_bodies;            /* dynamic bodies by island */
    int *union_root;               /* nb: union-find */
    int *island_joint_first;       /* island_count + 1: CSR into island_joints */
    int *island_joints;            /* world->joints indices by island */
    int island_capacity, island_body_capacity, island_joint_capacity;

    pp_constraint_list all;        /* stages 3-5 over every pair at the sub-step's start: what
                                      stage 6b (PLUS) and the sub-step split read */

    struct pp_plus_solver *plus;   /* stage 6b */
    int plus_capacity;
    struct pp_plus_joint_space *plus_joint_space; /* the joints' K of an impact island */
    double *plus_work;             /* A (9 m^2) */
    size_t plus_work_capacity;
    /* per contact of an impact island: Jacobian, parameters, frame rows (t1, t2, n), the
     * index in scratch.all, which tangent directions the joints hold (bit 0: t1, bit 1: t2);
     * per component: velocity, impulse, velocity change */
    struct pp_plus_contact_jacobian *plus_jac;
    struct pp_plus_contact_params *plus_params;
    double *plus_frame;
    int *plus_source;
    unsigned char *plus_held;
    double *plus_v, *plus_pi, *plus_dv;
    int plus_contact_capacity;
    /* per body of an impact island: inverse mass, velocity and its change (6 each) */
    struct pp_plus_body *plus_bodies;
    double *plus_nu, *plus_dnu;
    int plus_body_capacity;
    struct pp_plus_bilateral_row *plus_rows; /* the island's joint equalities, carried to now */
    int plus_row_capacity;
    int *plus_contact, *plus_island;  /* contacts bucketed by island; union-find over bodies */
    int *plus_body, *plus_first;      /* an island's bodies; CSR of the buckets */
    int plus_index_capacity;
    int *plus_joint, *plus_joint_first; /* joints bucketed by island (CSR) */
    int plus_joint_capacity, plus_joint_first_capacity;
    int impacts;                   /* impacts resolved this step */
    pp_impact_info *impact_info;   /* pp_world_get_impacts: the step's impact contacts */
    int impact_info_count, impact_info_capacity;

    pp_contact_info *info;         /* pp_world_get_contacts */
    int info_count, info_capacity;

    struct pp_warm_store *warm_prev; /* LCP bases by constraint identity: the previous
                                      sub-step's (worker 0's islands; the other workers'
                                      stores chained after it, pp_warm_store_chain) */
    pp_model warm_model;           /* the model of the step that filled warm_prev (or of the
                                      warm start restored into it) */
    pp_model warm_model_start;     /* warm_model at the step's start */
    int warm_swaps;                /* sub-steps of this step whose bases became warm_prev */
    int warm_kept;                 /* the step's first stores are in the workers' warm_kept */
    int *body_local;               /* nb: local index of a body in the island being stepped
                                      (islands share no dynamic body; see time_step_islands
                                      for kinematic ones); capacity island_body_capacity */

    double gravity[3];             /* stage 7's, for the islands' jobs (world.c) */
    /* Stages 7-8 on pp_config.threads workers (world.c time_step_islands). */
    pp_thread_pool *pool;
    pp_worker *workers;
    int worker_count;
    pp_island_outcome *outcomes;   /* per island */
    int *island_set_first;         /* island_count + 1: CSR of scratch.all's sets by island */
    int *island_order;             /* islands run in parallel, then those run after them */
    int *body_mark;                /* 2 nb: islands touching each kinematic body */
    int outcome_capacity, body_mark_capacity;
} pp_step_scratch;

struct pp_world {
    dWorldID ode_world;
    dSpaceID space;
    pp_config config;
    pp_step_stats stats;

    dJointGroupID contact_group;   /* PP_MODEL_ODE contact joints */
    dContact *ode_contacts;        /* PP_MODEL_ODE: the step's contacts, checked before any
                                      joint is made (ode_baseline.c) */
    dBodyID *ode_contact_bodies;   /* 2 per contact */
    dJointFeedback *ode_feedback;  /* 1 per contact: its contact joint's force (contact list) */
    dJointID *ode_program_joints;  /* 1 per contact, with a program's near callback: its joint */
    int ode_contact_count, ode_contact_capacity;
    int ode_contacts_lost;         /* program contacts not recorded this step (no memory) */

    dBodyID *registered;           /* pp_world_register_body */
    int registered_count, registered_capacity;

    pp_body *bodies;               /* snapshot of the managed bodies */
    int body_count, body_capacity;
    int *body_table;               /* hash of bodies[].id -> index (ode_bridge.c), -1 empty */
    int body_table_capacity;

    dGeomID *geoms;                /* geoms of the space tree (leaves, no spaces), in the
                                      order pegplus first saw them (ode_bridge.c) */
    struct pp_geom_order *geom_order;
    int geom_count, geom_capacity;

    pp_convex_record *convexes;
    int convex_count, convex_capacity;

    struct pp_box_record *boxes;   /* the polytope of each box size seen (convex.c) */
    int box_count, box_capacity;
    int box_next;                  /* where the next search of boxes starts (convex.c) */

    pp_joint *joints;              /* stage 1b: the joints of the step */
    int joint_count, joint_capacity;
    struct pp_joint_captures *captures; /* per joint, kept across steps (stage_joints.c) */
    pp_saved_accumulator *saved;   /* the force accumulators stage 1b's getInfo2 may change,
                                      as the program left them (ode_bridge.c) */
    int saved_count, saved_capacity;
    pp_joint_row *joint_rows;      /* their rows (world body indices) */
    double *joint_impulse;         /* per row: impulse over the step so far (N s) */
    int joint_row_count, joint_row_capacity;

    struct pp_auto_disable *auto_disable; /* ODE's auto-disable counters (stage_auto_disable.c) */
    dGeomID *warned_geoms;         /* geoms reported as not modelled (ode_bridge.c), once each */
    int warned_geom_count, warned_geom_capacity;
    int warned_unregistered_convex;
    struct pp_terrain_record *terrains; /* trimesh and heightfield geoms (terrain_ode.c) */
    int terrain_count, terrain_capacity;
    struct pp_heightfield_record *heightfields; /* pp_world_register_heightfield */
    int heightfield_count, heightfield_capacity;

    dNearCallback *near_callback;  /* the program's (pp_world_set_near_callback), or NULL */
    void *near_data;
    struct pp_probe_cache *probe;  /* its answers for this step's pairs (near_probe.c) */
    int probe_reported;            /* surface flags already reported as not honoured */

    pp_step_scratch scratch;
};

/* stage_auto_disable.c: stage 1c, ODE's auto-disable (sleep, then wake by the island walk;
 * *changed: bodies changed state, so stages 1-6 run again), its commit with a successful step
 * and its undo with a failed one. */
pp_status pp_auto_disable_sleep(pp_world *world, double h);
pp_status pp_auto_disable_wake(pp_world *world, int *changed);
void pp_auto_disable_commit(pp_world *world);
void pp_auto_disable_undo(pp_world *world);
void pp_auto_disable_free(pp_world *world);

/* ode_bridge.c: discovery, validation, snapshot and write-back (stages 1 and 9). */
pp_status pp_bridge_collect(pp_world *world);
/* Bad input, named in ODE's words and rejected before anything in ODE changes: the world's
 * parameters (every model; the contact and QuickStep ones under PP_MODEL_ODE) and every
 * enabled geom of the space tree. Bodies are checked by the snapshot (pp_body_problem). */
pp_status pp_bridge_validate_world(const pp_world *world);
pp_status pp_bridge_validate_geoms(const pp_world *world);
/* PP_MODEL_ODE: the disabled bodies dWorldStep will wake (joined to a stepped body by a joint
 * or by one of the step's contacts, whose bodies are `seeds`), checked as the snapshot checks
 * the stepped ones. */
pp_status pp_bridge_validate_woken(const pp_world *world, const dBodyID *seeds, int seed_count);
const char *pp_geom_class_name(dGeomID geom); /* "dBoxClass", ... */
pp_status pp_bridge_snapshot(pp_world *world, double h);
/* Stage 1b's getInfo2 adds a powered joint's motor force at a stop to its bodies' force
 * accumulators in ODE: they are saved before it, put back when the step fails or stages 1-6
 * run again in the step (auto-disable), and forgotten when the step ends. */
pp_status pp_bridge_save_accumulators(pp_world *world);
void pp_bridge_restore_accumulators(pp_world *world);
/* Stage 9 in two halves: the check of every body's result (PP_ERR_NUMERICAL: nothing may be
 * written), then the write, which cannot fail. */
pp_status pp_bridge_check_result(const pp_world *world);
void pp_bridge_write_back(pp_world *world);
int pp_bridge_find_body(const pp_world *world, dBodyID body); /* index or -1 */
void pp_bridge_order_free(pp_world *world);


/* stage_joints.c: stage 1b, the joints' rows (ode_joint_rows.c) at the start of the step; and
 * their dJointFeedback at its end. */
pp_status pp_stage_joints(pp_world *world, double h);
void pp_joint_feedback(pp_world *world, double h);
void pp_joint_captures_free(pp_world *world);
/* ode_joint_rows.c: rows of one joint as dWorldStep builds them (-1: not available). */
int pp_ode_joint_rows_available(void);
int pp_ode_joint_rows(dJointID joint, double fps, double erp, double cfm, pp_joint_row rows[6]);

/* integrate.c: ODE's free-body update on plain data (stage 8 and the velocity part of 7). */
void pp_body_apply_external_impulse(pp_body *body, const double gravity[3], double h);
void pp_body_integrate_pose(pp_body *body, double h);
int pp_body_is_finite(const pp_body *body);

/* ode_baseline.c: PP_MODEL_ODE. */
pp_status pp_ode_baseline_step(pp_world *world, double h);
/* PP_MODEL_ODE with the program's near callback: dSpaceCollide with it, then the stepper; its
 * contact joints are in its own group, which the program empties as before. */
pp_status pp_ode_program_callback_step(pp_world *world, double h);
/* A contact joint the program made (the dJointCreateContact wrappers call it after making
 * it): recorded for the contact list while pp_ode_program_callback_step's dSpaceCollide runs
 * on this thread for a world of `w`, ignored otherwise. */
void pp_ode_record_contact(dWorldID w, const dContact *contact, dJointID joint);
/* The first bad field of a surface (its name and rule; *value the bad value), or NULL. The
 * ode_* fields are checked when ode_fields is non-zero (PP_MODEL_ODE reads them). */
const char *pp_surface_problem(const pp_surface *surface, int ode_fields, double *value);

/* terrain_ode.c: static trimesh and heightfield geoms as terrain (docs/design.md "Terrain").
 * pp_terrain_geom: 1 when g is one (then collected for the step, or refused), 0 else;
 * pp_terrain_stage_shapes: stage 2's triangle shapes near the moving shapes;
 * pp_terrain_pair_rule: the internal-edge rule and duplicates on a pair's new contacts. */
int pp_terrain_geom(pp_world *world, dGeomID g, pp_status *st, const char **refusal);
pp_status pp_terrain_stage_shapes(pp_world *world);
int pp_terrain_pair_rule(const pp_step_scratch *s, pp_contact *list, int first, int count,
                         int a, int b);
void pp_terrain_records_free(pp_world *world);
void pp_terrain_begin_collect(pp_world *world);

/* A heightfield's samples as dGeomHeightfieldDataBuild* gave them (ODE has no getter):
 * registered with pp_world_register_heightfield (per world) or captured by the interposed
 * builders (interpose_probe.c, process-wide). */
typedef struct pp_heightfield_record {
    dHeightfieldDataID data;
    int type;                      /* ODE's: 0 callback, 1 byte, 2 short, 3 float, 4 double */
    const void *samples;           /* borrowed (ODE's bCopyHeightData = 0): read when built */
    double *copied;                /* bCopyHeightData != 0: our copy */
    dHeightfieldGetHeight *callback;
    void *user;
    double width, depth, scale, offset, thickness;
    int width_samples, depth_samples, wrap;
} pp_heightfield_record;
void pp_heightfield_capture(const pp_heightfield_record *record, int copy);
void pp_heightfield_capture_forget(dHeightfieldDataID data);
pp_status pp_bridge_grow_shapes(pp_world *world, int count);

/* convex.c */
void pp_convex_records_free(pp_world *world);
const pp_polytope *pp_convex_find(const pp_world *world, dGeomID geom);
const pp_polytope *pp_box_polytope(pp_world *world, const double lengths[3]);
/* A dCylinder's inscribed prism (pegplus/geometry.h "Cylinders"), one per size; NULL for
 * sizes pp_polytope_cylinder_prism refuses. */
const pp_polytope *pp_cylinder_prism(pp_world *world, double radius, double length);

/* ode_bridge.c: the managed geoms as pp_shapes (stage 1). */
pp_status pp_bridge_shapes(pp_world *world);

/* stage_broadphase.c: stage 2 (and the shapes' poses it needs). */
void pp_stage_pose_shapes(pp_world *world, double dt);
void pp_pose_body_shapes(pp_world *world, int body, double dt);
double pp_body_reach(const pp_world *world, int body);
/* An island at rest moves no point of its bodies more than this in a step, m (relinearize.c
 * says why this distance). */
#define PP_REST_DISPLACEMENT 1e-8
int pp_body_at_rest(const pp_world *world, int body, const double v[3], const double w[3],
                    double dt);
pp_status pp_stage_broadphase(pp_world *world);   /* candidate pairs into scratch.pairs */

/* stage_islands.c: stage 6, islands of dynamic bodies through the candidate pairs; the pairs
 * are regrouped island by island (a pair with no dynamic body is dropped: nothing can move). */
pp_status pp_stage_islands(pp_world *world);
/* dSpaceCollide's filters on a pair of geoms (same body, category/collide bits) and ODE's
 * near-callback one (bodies joined by a non-contact joint do not collide); 1: may collide. */
int pp_pair_may_collide(dGeomID g1, dGeomID g2);
/* Fill island i's bodies (dynamic ones, then the kinematic ones its pairs touch) and pairs
 * into iw, and scratch.body_local for them. */
pp_status pp_island_select(pp_world *world, int island, pp_island_work *iw);

/* stage_constraints.c: stages 3-5 on a list of pairs into a constraint list. */
pp_status pp_build_constraints(const pp_world *world, pp_island_work *iw, const pp_pair *pairs,
                               int pair_count, pp_model model, pp_constraint_list *out,
                               int *near_pairs);
void pp_constraint_stats(pp_world *world, int near_pairs); /* from scratch.all */
pp_status pp_constraint_list_append(pp_constraint_list *list, const pp_peg_set *set,
                                    const pp_contact *contacts, const double *restitution);
pp_status pp_constraint_list_index(pp_constraint_list *list);
void pp_constraint_list_swap(pp_constraint_list *list, int a, int b);
int pp_constraint_set_largest_gap(const pp_constraint_list *list, int set);
void pp_constraint_list_free(pp_constraint_list *list);
pp_status pp_pose_pair(pp_island_work *iw, const pp_shape *sa, const pp_shape *sb,
                       pp_polytope_view *va, pp_polytope_view *vb);
int pp_update_contact(const pp_shape *sb, const pp_polytope_view *va,
                      const pp_polytope_view *vb, pp_contact *c);
/* The standard model's contacts c[0, count) of polytopes a, b without those whose negative
 * gap reads deeper than the pair (stage_constraints.c, "No feature contact ... deeper than it
 * is"); returns the count kept (in place). When contacts were left out, `closest` is the
 * pair's closest-point contact (gap d) and *add_closest says whether it must join (no contact
 * kept reads the pair's depth); both may be NULL. */
int pp_contacts_at_pair_depth(const pp_step_scratch *s, pp_contact *c, int count, int a, int b,
                              pp_contact *closest, int *add_closest);

/* stage_time_step.c: stage 7 for one island: the LCP of its constraint list. */
pp_status pp_island_load(pp_world *world, pp_island_work *iw);  /* bodies, nu*, q^l */
pp_status pp_island_joint_rows(pp_world *world, pp_island_work *iw);
pp_status pp_island_solve(pp_world *world, pp_island_work *iw, double h, int *model,
                          const double *nu_hat);
/* The record of velocities combining the answers `earlier` and `later` (a re-linearisation's
 * damped step): the first failure's status, the highest fallback and residual, both counts of
 * failed solves. */
pp_answer pp_answer_combine(pp_answer earlier, pp_answer later);
void pp_island_work_free(pp_island_work *iw);
/* Unknowns of the LCP of the island's current list and joint rows (k friction directions). */
int pp_island_lcp_unknowns(const pp_island_work *iw, int k);
/* psi' = psi(q^) - h G(q^)^T nu^ for the list's contacts (nu_hat: 6 per local body). */
void pp_island_shift_gaps(const pp_world *world, pp_island_work *iw, double h,
                          const double *nu_hat);
/* Append the island's contacts and their last impulses to *info (pp_contact_info list). */
pp_status pp_record_contact_info(const pp_world *world, const pp_island_work *iw,
                                 pp_contact_info **info, int *count, int *capacity);

/* relinearize.c: the longest cycle of re-linearisation iterates told apart ("A cycle";
 * boxstack's cycles: periods 3 to 6). */
#define PP_RELIN_PERIOD_MAX 6

/* relinearize.c: stages 7-8 of one island: the first solve, then ST96 §3.6. */
pp_status pp_island_time_step(pp_world *world, pp_island_work *iw, double h);
/* relinearize.c: the damped fixed-point iteration's next step length from alpha, this
 * iterate's residual and the last one's; *grew (in: the last residual had grown, out: this
 * one has; 0 at the first) (exposed for its unit test). */
double pp_relinearize_damping(double alpha, double residual, double last_residual, int *grew);
/* relinearize.c: pose the island's bodies and shapes at q^ = q^l + h f(iw->nu_hat), saving
 * q^l (restore 0), or put q^l back (restore 1); and a standard-model U set's gap read at its
 * pair's signed distance where it reads deeper (PEG's sets read as they are). */
void pp_island_pose_predicted(pp_world *world, pp_island_work *iw, double h, int restore);
void pp_island_read_at_pair_depth(const pp_step_scratch *s, const pp_island_work *iw,
                                  pp_contact *c);
/* relinearize.c: has the island a pair with a sphere, capsule or other smooth shape (its
 * closest-point contacts are rebuilt at every pose, not carried by the working set)? */
int pp_island_has_smooth_pair(const pp_step_scratch *s, const pp_island_work *iw);
/* relinearize.c: set w of the working set read at the shapes' current poses, its member of
 * largest gap (as pp_island_read_at_pair_depth reads it) into *largest; *readable 0 where a
 * member cannot be re-evaluated there (the iteration then leaves the set out). */
pp_status pp_island_read_work_set(const pp_world *world, pp_island_work *iw, int w,
                                  pp_contact *largest, int *readable);
/* stage_project.c: post-stabilisation of a step whose re-linearisation did not converge (the
 * island's end poses moved onto its working set's constraints, velocities untouched); the
 * poses are kept in iw->pose_projected and put on the bodies by pp_island_apply_projection
 * after stage 8. */
pp_status pp_island_project(pp_world *world, pp_island_work *iw, double h);
void pp_island_apply_projection(pp_world *world, const pp_island_work *iw);

/* thread_pool.c: run a job on every worker (the caller is worker 0) and wait for them. */
pp_status pp_thread_pool_create(int threads, pp_thread_pool **out);
void pp_thread_pool_destroy(pp_thread_pool *pool);
int pp_thread_pool_size(const pp_thread_pool *pool);
void pp_thread_pool_run(pp_thread_pool *pool, void (*job)(void *arg, int worker), void *arg);

/* warm_start.c: LCP bases kept by constraint identity (body pair, features, set). */
pp_status pp_warm_store_create(struct pp_warm_store **out);
void pp_warm_store_destroy(struct pp_warm_store *store);
void pp_warm_store_clear(struct pp_warm_store *store);
/* Record the basis of a pp_peg_solve on (list, k) under each set's identity. */
pp_status pp_warm_store_put(struct pp_warm_store *store, const pp_world *world,
                            const pp_constraint_list *list, int k, const unsigned char *basis);
/* Copy every entry of `from` into `to`. */
pp_status pp_warm_store_merge(struct pp_warm_store *to, const struct pp_warm_store *from);
/* Lookups in `store` (pp_warm_store_get and the others, pp_world_save_warm_start) go on in
 * `more` (and the stores chained after it) for keys it does not hold; NULL: none. Kept until
 * the store is cleared. */
void pp_warm_store_chain(struct pp_warm_store *store, const struct pp_warm_store *more);
/* A warm basis for (list, k) into basis (pp_peg_lcp_size bytes): each set's entries from the
 * first store that knows its identity (`first` is required and lends its scratch; `second`
 * may be NULL), all-w for sets no store knows. Returns the number of sets found. */
int pp_warm_store_get(struct pp_warm_store *first, const struct pp_warm_store *second,
                      const pp_world *world, const pp_constraint_list *list, int k,
                      unsigned char *basis);

/* The same for the answer z of that solve (indexed like the whole LCP), kept apart by the
 * caller's kind (> 0; stage_time_step.c: the step's first solve, a re-linearisation iterate):
 * put records each set's unknowns, get gathers them into z (pp_peg_lcp_size + set_count *
 * PP_CONTACT_ROLLING_UNKNOWNS_MAX doubles; 0 for every unknown of a set no store knows and for
 * rolling and joint unknowns) and returns the number of sets found. */
pp_status pp_warm_store_put_answer(struct pp_warm_store *store, const pp_world *world,
                                   const pp_constraint_list *list, int k, int kind,
                                   const double *z);
int pp_warm_store_get_answer(struct pp_warm_store *first, const struct pp_warm_store *second,
                             const pp_world *world, const pp_constraint_list *list, int k,
                             int kind, double *z);

/* The same for the island's joint rows with LCP unknowns (stops, motors): their bytes of the
 * basis (after the contacts' unknowns). get returns the rows found, *wanted those with
 * unknowns. */
pp_status pp_warm_store_put_joints(struct pp_warm_store *store, const pp_world *world,
                                   const pp_island_work *iw, const unsigned char *basis);
int pp_warm_store_get_joints(struct pp_warm_store *first, const struct pp_warm_store *second,
                             const pp_world *world, const pp_island_work *iw,
                             unsigned char *basis, int *wanted);

/* impact_stage.c: stage 6 (PLUS) and the end of the sub-step (the next impact, or a fast
 * pair's touch or its half-width limit: pp_time_to_impact's comment). dt: the sub-step
 * (contacts deeper than max_correcting_velocity dt take no part in impacts). */
pp_status pp_stage_impact(pp_world *world, double dt);
/* Over the sets [set_first, set_end) of scratch.all (an island's), g the gravity. */
double pp_time_to_impact(const pp_world *world, const double g[3], int set_first, int set_end,
                         double remaining);
/* The gap rate dpsi/dt = g_a . nu_a + g_b . nu_b of contact c (PEG Eq 7 row) for the twists
 * nu_a, nu_b (6 each: linear, angular; NULL for a static side), the Jacobian taken about the
 * bodies' current centres. */
double pp_contact_gap_rate(const pp_world *world, const pp_contact *c, const double *nu_a,
                           const double *nu_b);
void pp_step_scratch_free(pp_step_scratch *scratch);

/* Grow a dynamic array to hold at least `need` elements of `size` bytes. */
pp_status pp_grow(void **array, int *capacity, int need, size_t size);
/* Grow `count` arrays that share one capacity (element sizes sizes[i]) to `need` elements. */
pp_status pp_grow_together(void **const arrays[], const size_t sizes[], int count, int *capacity,
                           int need);

double pp_now_seconds(void);

void pp_quaternion_to_rotation(const double q[4], double R[9]);
int pp_invert_inertia(double out[9], const double inertia[9]);
const char *pp_body_problem(const pp_body *body);
int pp_pair_surface(const pp_world *world, dGeomID g1, dGeomID g2, pp_surface *surface);

/* near_probe.c: the program's near callback probed once per candidate pair and step (after
 * stage 6's filters, serially), and the surface of shapes a, b for stages 3-5 (the probe's
 * answer when a near callback is set, else pp_pair_surface). Returns 0: no collision. */
pp_status pp_stage_near_probe(pp_world *world);
/* What a near callback's dContact sets beyond pp_surface, for the pegplus models
 * (docs/drop-in.md's table). ODE's contact rows act on the velocity of its joint's first body
 * relative to the second (node0, node1): `node0` is the geom on node0's side. */
typedef struct pp_surface_ext {
    unsigned flags;                /* PP_CONTACT_* (features.h) */
    dGeomID node0;
    int fdir1_set;                 /* dContactFDir1: t1 = fdir1; else ODE's dPlaneSpace(normal) */
    double fdir1[3];
    double mu2;                    /* along t2 (= mu without dContactMu2) */
    double motion[3];              /* motion1, motion2, motionN (0 where the flag is absent) */
    double soft_cfm, soft_erp;     /* SOFT: dContactSoftCFM's (0 without), SoftERP's (1 without) */
    double slip[2];                /* SLIP: slip1, slip2 (0 where the flag is absent) */
    double rho[3];                 /* ROLLING: about t1, t2, the normal (ODE's rho, and rho2,
                                      rhoN with dContactAxisDep, else rho for all three) */
} pp_surface_ext;
/* ext (optional): the pair's pp_surface_ext, or NULL when it has none (no near callback, or
 * no such flags); valid until the next probe stage. */
int pp_pair_surface_of_shapes(const pp_world *world, int a, int b, pp_surface *surface,
                              const pp_surface_ext **ext);
void pp_near_probe_clear(pp_world *world);
void pp_near_probe_free(pp_world *world);
/* dJointFeedback on the callback's contact joints (near_probe.c, docs/drop-in.md): the
 * impulses of an island's last solve and of a sub-step's impacts (scratch.impact_info from
 * `first` on) summed per pair, then written as impulse / h after the step. */
void pp_contact_feedback_add_island(const pp_world *world, const pp_island_work *iw);
/* The step run again from its start (world.c "A sub-step redone shorter"): the pairs' answers
 * are kept (the callback is asked once a step), their impulses for dJointFeedback zeroed. */
void pp_near_probe_rerun(pp_world *world);
void pp_contact_feedback_add_impacts(const pp_world *world, int first);
void pp_contact_feedback_write(const pp_world *world, double h);
/* The probe's side of the interposed dCollide / dJointCreateContact: 1 when the call belongs
 * to a probe in progress on this thread (answered here), 0 to forward it to libode. */
int pp_probe_collide(dGeomID o1, dGeomID o2, int flags, dContactGeom *contact, int skip,
                     int *count);
int pp_probe_joint_create_contact(dWorldID w, dJointGroupID group, const dContact *c,
                                  dJointID *out);
extern int (*pp_probe_interposer_check)(void);

#endif
