/*
 * pegplus/pegplus.h — the ODE-facing API of pegplus.
 *
 * An ODE program that steps its world with
 *
 *     dSpaceCollide(space, data, near_callback);   // contact joints from dCollide
 *     dWorldStep(world, h);
 *     dJointGroupEmpty(contact_group);
 *
 * replaces those three lines with one call:
 *
 *     pp_world_step(pw, h);
 *
 * after creating `pw` once with pp_world_create(world, space, &config). With
 * pp_world_set_near_callback(pw, data, near_callback) the program's own near callback keeps
 * deciding which pairs collide and with which surface (its `dJointGroupEmpty` stays after
 * pp_world_step); without it, config.surface / surface_fn do. A program that should not change
 * at all runs under `pegplus-run --model ode|standard|peg -- ./program` (docs/drop-in.md).
 * The contact model is chosen by config.model and may be switched between steps
 * (pp_world_set_model):
 *
 *   PP_MODEL_ODE       stock ODE exactly as a typical program runs it: dSpaceCollide, a
 *                      near callback calling dCollide (up to config.ode_max_contacts per
 *                      pair), contact joints built from the pair's pp_surface, dWorldStep
 *                      or dWorldQuickStep, the joint group emptied. The baseline.
 *   PP_MODEL_STANDARD  pegplus's own Stewart–Trinkle stepper; every near feature pair is a
 *                      unilateral constraint (the "standard model" of the PEG paper).
 *   PP_MODEL_PEG       the same stepper with PEG's U/I/X constraints between polytopes.
 *
 * Under the pegplus models the library integrates the managed bodies itself, in the order
 * ODE's dWorldStep uses (gravity, implicit gyroscopic torque, semi-implicit Euler, quaternion
 * update + normalisation, then damping), and writes position, orientation and velocities back
 * with dBodySet*, clearing the force and torque accumulators as ODE does.
 *
 * Which bodies are managed: every body reachable from the space tree given at creation (through
 * its geoms) or through the joint graph from those bodies, plus bodies registered explicitly with
 * pp_world_register_body (ODE has no public body list). Disabled bodies are not stepped (as in
 * ODE); as in ODE a disabled body is enabled again in the step an enabled body reaches it
 * (a candidate pair: within the proximity margin plus the step's motion) or is joined to it by
 * an enabled joint. ODE's auto-disable runs under the pegplus models with ODE's parameters
 * and rules (docs/design.md "Auto-disable"): idle bodies sleep at the step ODE would put them
 * to sleep for the same motion, and sleeping bodies cost nothing but a broadphase entry.
 *
 * Joints (docs/joints.md): under the pegplus models every enabled ODE joint on a stepped body
 * (all of ODE 0.16's types but contact joints, which pegplus makes itself) contributes the rows
 * dWorldStep would build, with their ERP, CFM, limits and motors, to the same LCP as the
 * contacts; dJointFeedback is filled as dWorldStep fills it. Impacts (PLUS) do not yet see
 * joints (README "Known problems"). When libode does not export the joint rows (another build
 * of ODE), worlds with joints are rejected with PP_ERR_UNSUPPORTED. Under PP_MODEL_PEG, a step
 * whose PEG LCP is not solved runs with the standard model's constraints instead
 * (pp_step_stats.peg_fallback, a warning).
 *
 * Conventions: see pegplus/base.h (double precision, SI units, (w,x,y,z) quaternions).
 * Errors: every call returns a pp_status; a rejected call logs one message naming the problem
 * through the log hook (pp_set_log_hook) and changes nothing in ODE.
 * Binary compatibility: none between versions before 1.0 (libpegplus.so.0). pp_config and
 * pp_step_stats gain fields where they belong, beside the fields they qualify, not at their
 * ends (pp_config is the program's own copy, which an appended field would not keep
 * compatible either): a program is rebuilt against the pegplus.h of the library it runs with.
 */
#ifndef PEGPLUS_PEGPLUS_H
#define PEGPLUS_PEGPLUS_H

#include <ode/ode.h>

#include "pegplus/base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pp_model {
    PP_MODEL_ODE = 0,      /* stock ODE: dCollide + contact joints + dWorldStep/QuickStep */
    PP_MODEL_STANDARD = 1, /* Stewart–Trinkle stepper, one unilateral constraint per near pair */
    PP_MODEL_PEG = 2       /* Stewart–Trinkle stepper with PEG constraints */
} pp_model;

/* A short name: "ode", "standard", "peg". */
const char *pp_model_name(pp_model model);

typedef enum pp_ode_stepper {
    PP_ODE_WORLD_STEP = 0, /* dWorldStep (Dantzig LCP, exact) */
    PP_ODE_QUICK_STEP = 1  /* dWorldQuickStep (projected Gauss–Seidel / SOR) */
} pp_ode_stepper;

/*
 * Surface parameters of one geom pair.
 *
 * mu, bounce and bounce_vel are read by every model:
 *   mu          Coulomb friction coefficient, >= 0 (dInfinity allowed: no sliding).
 *   bounce      restitution in [0, 1]: ODE's bounce in PP_MODEL_ODE, PLUS's e_min otherwise.
 *   bounce_vel  m/s, >= 0: ODE's bounce_vel (minimum approach speed for a bounce), PLUS's
 *               capture speed v_capture otherwise.
 *   plus_v_plastic  m/s, read by the pegplus models only: the approach speed at which PLUS's
 *               coefficient of restitution reaches `bounce` (its Fig. 2 line runs from 1 at
 *               rest to bounce at plus_v_plastic). Default 0 (or anything <= bounce_vel): the
 *               COR is 0 up to bounce_vel and `bounce` above it, as in ODE.
 * The ode_* fields are read only by PP_MODEL_ODE and ignored by the pegplus models:
 *   ode_mode    dContact surface.mode flags (default dContactApprox1); dContactBounce is added
 *               when bounce > 0, dContactSoftERP/CFM when ode_soft_erp/cfm are >= 0.
 *   ode_soft_erp, ode_soft_cfm  copied to surface.soft_erp/soft_cfm when >= 0 (default -1: unset).
 */
typedef struct pp_surface {
    double mu;
    double bounce;
    double bounce_vel;
    double plus_v_plastic;
    int ode_mode;
    double ode_soft_erp;
    double ode_soft_cfm;
} pp_surface;

/*
 * Per-pair surface callback, in the spirit of ODE's near callback. Called once per geom pair
 * that may touch in this step, with *surface pre-filled from pp_config.surface. Return 0 to
 * let the pair pass through each other (no contact), non-zero to keep it.
 */
typedef int (*pp_surface_fn)(void *user, dGeomID g1, dGeomID g2, pp_surface *surface);

typedef struct pp_config {
    pp_model model;               /* default PP_MODEL_PEG */
    pp_ode_stepper ode_stepper;   /* PP_MODEL_ODE only; default PP_ODE_WORLD_STEP */
    int ode_max_contacts;         /* PP_MODEL_ODE: dCollide contacts per pair, 1..64; default 8 */
    pp_surface surface;           /* default surface of every pair: mu 0.5, bounce 0, bounce_vel 0 */
    pp_surface_fn surface_fn;     /* optional per-pair override; NULL = use `surface` */
    void *surface_user;           /* passed to surface_fn */
    double proximity_margin;      /* eps, m: pairs closer than this get constraints; default 0.01 */
    int friction_directions;      /* k, directions of the friction pyramid, 2..64; default 8.
                                     2 is for planar worlds (bodies on Plane2D joints, moving in
                                     the plane z = const): friction along +-(e_z x n), the 2D
                                     Coulomb cone exactly (docs/joints.md "2D") */
    double compliance;            /* relative constraint-force mixing of the time-stepping LCP
                                     (pegplus/mlcp.h), in [0, 1e-3]; default 0 (exact ST96).
                                     A value r > 0 regularises the LCP of redundant contacts
                                     (stacked faces) but costs a steady overlap of about
                                     r * |M| * p_n / h (2e-12 m for a column of 10 unit boxes at
                                     r = 1e-10: PEG's pouring then never got below 1e-12 m^3). */
    int relinearize_iterations;   /* pegplus models: Stewart & Trinkle 1996 §3.6 fixed-point
                                     iterations, 0..100; default 20. After the step's LCP, the
                                     contacts are rebuilt at the predicted end-of-step pose
                                     q^(l+1) and the LCP is solved again with the gap
                                     linearised there, until the velocity changes by less than
                                     1e-11 (relative), the count is reached, or the iterates
                                     close a cycle (an estimate and answer repeating those of
                                     2..6 iterates before with a residual that grew: the least
                                     violating estimate is kept; the iteration is damped where
                                     it oscillates; README "Re-linearisation").
                                     Removes the second-order overlap a rotating body gets from
                                     a gap linearised at the start of the step
                                     (~ h^2 |w|^2 r / 2). */
    int threads;                  /* pegplus models: threads that step the contact islands of a
                                     step, 1..PP_MAX_THREADS; default 1 (no thread is started).
                                     Islands are independent problems; their results are
                                     merged in island order, so a step gives the same bits
                                     for any count. With threads > 1, surface_fn and the log
                                     hook may be called from several threads at once. */
    double lcp_budget_seconds;    /* pegplus models: wall-clock seconds the LCP solves of one
                                     island may take in one step (its sub-steps,
                                     re-linearisations and retries together); default 10 s;
                                     0 = no clock at all: only pegplus/lcp.h's work-based
                                     pivot caps bound a solve, so results do not depend on the
                                     machine's load (what the tests use for chaotic scenes).
                                     When it runs out, the island's LCP is answered by the
                                     bounded iterative fallback (pp_lcp_solve_fallback; on an
                                     island too large to form M, its sweeps in body space) with
                                     its residual in pp_step_stats (lcp_fallback = 2). The
                                     clock is hard: past it no Lemke attempt, retry, screening
                                     round or factorisation starts, and the fallback gets work
                                     for the time left plus about 1 s (PP_LCP_PAST_CLOCK_WORK);
                                     steps of 10.1-10.4 s measured on the hardest scenes. The
                                     re-linearisation starts no new iteration after half of it
                                     (relinearize_cut), so the LCPs keep the other half. What
                                     this budget cuts depends on the machine's speed: it is the
                                     one thing that can make two runs differ. */
    int load_sharing;             /* pegplus models, 0 or 1; default 1: where an island's
                                     supports are redundant (a face on a face, a plate on
                                     balls) its many LCP solutions are narrowed to the limit
                                     of a uniform compliance going to zero, so every support
                                     carries load and friction (README "Redundant
                                     supports"). 0 keeps the vertex Lemke finds (three
                                     supports carry it all): faster where most islands rest on
                                     faces (a settled 30-box pile: 1.0 -> 0.38 ms a step), but
                                     friction and rolling over many supports are then wrong. */
    double max_correcting_velocity; /* pegplus models, m/s, > 0 (INFINITY: no bound); default
                                     0.1 (the value ODE's demos give
                                     dWorldSetContactMaxCorrectingVel). A contact found
                                     penetrating, psi < 0, asks the step for the gap rate
                                     -psi/h (ST96's psi/h term): exact for the round-off
                                     overlaps the models leave, but a body left centimetres
                                     deep by another model (PP_MODEL_ODE) or put there by the
                                     program would be shot out at tens of m/s. Depths beyond
                                     this speed times h are recovered at this speed, over
                                     several steps. The ODE world's own setting is not read:
                                     its default, dInfinity, would give no bound. */
    long lcp_budget_pivots;       /* pegplus models: Lemke pivots the LCP solves of one island
                                     may take, counted over the solves lcp_budget_seconds'
                                     clock covers (one budget: whichever runs out first ends
                                     it), >= 0; default 0 = no limit. The machine-independent
                                     counterpart of the clock: when it runs out the island's
                                     LCP is answered by the bounded fallback (lcp_fallback =
                                     2), and a re-linearisation iterate cut by it after exact
                                     answers is not applied (relinearize_cut), as at the
                                     clock; but what it cuts is the same on every machine. It
                                     counts Lemke's pivots only: the interior-point rounds and
                                     the fallback are held to their own work bounds. */
    int post_stabilisation;       /* pegplus models, 0 or 1; default 1: an island whose
                                     re-linearisation did not converge (relinearize_refused,
                                     or the last estimate kept short of its fixed point) and
                                     whose kept end pose leaves a constraint of its working
                                     set violated by more than 1e-13 m has that pose moved by
                                     the smallest mass-weighted displacement onto the
                                     constraints (Cline & Pai 2003; velocities unchanged),
                                     when that displacement is at most 1e-6 m a body point
                                     and ends within 1e-14 m (pp_step_stats.positions_projected;
                                     docs/design.md "Post-stabilisation"). 0: the pose the
                                     iteration kept. */
} pp_config;

#define PP_MAX_THREADS 64

/* Every parameter at its documented default. */
pp_config pp_config_default(void);

/* PP_OK, or PP_ERR_INVALID_ARGUMENT with a message naming the first bad field. */
pp_status pp_config_validate(const pp_config *config);

/* Statistics of the last pp_world_step. Times in seconds (wall clock, monotonic). */
typedef enum pp_stage {
    PP_STAGE_SNAPSHOT = 0,
    PP_STAGE_BROADPHASE,
    PP_STAGE_PROXIMITY,      /* PP_MODEL_ODE: dSpaceCollide; the pegplus models time their
                                proximity test, feature contacts and constraint sets (stages
                                3-5, done pair by pair) together under PP_STAGE_FEATURES */
    PP_STAGE_FEATURES,
    PP_STAGE_CONSTRAINTS,    /* unused: see PP_STAGE_PROXIMITY */
    PP_STAGE_IMPACT,
    PP_STAGE_TIME_STEP,
    PP_STAGE_INTEGRATE,
    PP_STAGE_WRITE_BACK,
    PP_STAGE_COUNT
} pp_stage;

typedef struct pp_step_stats {
    pp_model model;          /* model that ran the step */
    pp_status status;        /* what pp_world_step returned */
    int bodies;              /* managed (stepped) bodies */
    int shapes;              /* geoms seen in the space tree */
    int ode_contacts;        /* PP_MODEL_ODE: contact joints created */
    double ode_max_depth;    /* PP_MODEL_ODE: deepest dContactGeom.depth reported, m */
    int candidate_pairs;     /* broadphase pairs (AABBs inflated by the speculative margin) */
    int near_pairs;          /* pairs within the margin after the proximity query */
    int contacts;            /* contacts (feature pairs) handed to the time stepper */
    int islands;             /* islands of the last sub-step: connected components of dynamic
                                bodies through candidate pairs and joints, each stepped on its
                                own */
    int joints;              /* ODE joints in the step (enabled, on a stepped body) */
    int joint_rows;          /* their constraint rows */
    int joint_regularised;   /* solves whose joint equalities were redundant without CFM (a
                                closed loop with CFM = 0): solved with up to 1e-6 of their
                                largest diagonal added (docs/joints.md) */
    int islands_failed;      /* islands (of each sub-step) whose contacts got no impulse: no
                                usable answer was applied (lcp_fallback 3) */
    int lcp_approximate;     /* islands (of each sub-step) whose answer applied is the bounded
                                fallback's (lcp_fallback 2) */
    int lcp_size;            /* unknowns of each island's last LCP solved, summed over the
                                islands of every sub-step */
    int lcp_largest;         /* unknowns of the largest LCP solved in the step */
    int lcp_screened;        /* unknowns of those islands' LCPs left out of the solve by
                                constraint screening (README "Constraint screening"), whose
                                rows were verified at the answer instead; not in lcp_size */
    int lcp_solves;          /* LCP solves (islands x re-linearisations, all sub-steps, with
                                the energy retries and the PEG fallback's solves) */
    int lcp_warm_solves;     /* of those, answered from their warm start (the basis kept by
                                constraint identity, or the kept answer of the sticking solve
                                or of load sharing) without pivoting */
    int lcp_pivots;          /* pivots of Lemke's method, all attempts */
    int lcp_factor_refused;  /* Lemke paths of the step's LCPs that ended, as at their pivot
                                cap, because a sparse factorisation of their basis (LCPs of
                                >= 161 unknowns) would have exceeded the work bound, ~5e8
                                estimated flops (pegplus/lcp.h factor_work_exceeded) */
    /* The answers applied. An island may solve several LCPs in a step (re-linearisation
     * iterates, the PEG fallback, the energy retries); its bodies get one answer: the last
     * solve's where it is kept, else an earlier one (a re-linearisation keeps an earlier
     * estimate where an iterate is cut, answered only approximately after exact answers, or
     * violates the constraints more; relinearize_cut, relinearize_refused). A damped
     * re-linearisation estimate combines the answers of several iterates: the worst of
     * them. lcp_status, lcp_residual and lcp_fallback are those answers', the worst over
     * the islands and sub-steps; a solve whose answer was not applied shows only in the
     * work (lcp_solves, lcp_pivots) and, when it failed, in lcp_dropped. */
    int lcp_status;          /* pp_lcp status of the answers applied: 0 when each is an LCP
                                solution to the acceptance of pegplus/lcp.h, else the first
                                island's that is not */
    double lcp_residual;     /* natural-map residual of the answers applied, the worst */
    int lcp_fallback;        /* of the answers applied, the worst: 0 none; 1 solved only as
                                M + eps I (regularised), or with the energy retry's compliance;
                                2 answered by the bounded iterative fallback (the budget ran
                                out, or Lemke failed and the fallback reached a relative
                                residual <= 1e-6), its residual in lcp_residual; 3 no usable
                                answer: that island's contacts got no impulse (README
                                "Failures") */
    int lcp_dropped;         /* island LCP solves not answered to the acceptance (no answer,
                                or the bounded fallback's approximate one) whose answer was
                                not applied: a re-linearisation iterate not kept (cut by the
                                budget or the work bound, or an earlier estimate kept), the
                                step's first answer replaced by an iterate's, a PEG LCP
                                replaced by the standard model's constraints
                                (peg_fallback), an approximate answer beyond the energy bound
                                solved again; 0 when every failed solve's answer (if any)
                                was applied */
    int lcp_warm_started;    /* 1: every LCP of the step was answered from its warm start
                                without pivoting (lcp_warm_solves == lcp_solves > 0) */
    int impacts;             /* PLUS impacts resolved (islands), all sub-steps */
    double impact_energy_change; /* kinetic energy after minus before of the bodies of the
                                    step's impacts, summed over them, J, measured on the bodies'
                                    velocities: <= 0, PLUS gains no energy (a moving kinematic
                                    body may give energy; with joints PLUS sees the velocities
                                    the joints allow, so their drift correction does no work) */
    int impact_energy_fallbacks; /* impacts whose PLUS answer would have raised the island's
                                    kinetic energy beyond round-off, scaled back to gain none
                                    (pp_plus_limit_energy; a warning is logged) */
    int substeps;            /* sub-steps: 1, or more when the step was split at an impact */
    double min_gap;          /* smallest gap psi among the contacts at the start of the step
                                or of any of its sub-steps, m */
    int peg_u_sets;          /* PP_MODEL_PEG: constraint sets of the last sub-step by kind (U:   */
    int peg_i_sets;          /*   unilateral, I: intercontact, X: cross-contact; PEG Eqs 17-24), */
    int peg_x_sets;          /*   0 under the other models                                      */
    int peg_fallback;        /* PP_MODEL_PEG: island solves whose PEG LCP was not solved, or
                                was declined as an impact's (a moving island with I/X sets,
                                no joint rows, no warm start, 8 000 unknowns or more, not
                                answered by constraint screening) or a first contact's (the
                                same but warm, no set active in its warm start and some set
                                closing at the free motion: pegplus/peg.h
                                pp_peg_workspace_decline), so the standard model's
                                constraints ran for that island instead (README "Failures");
                                other islands are not affected */
    int peg_declined_largest; /* PP_MODEL_PEG: unknowns of the largest PEG LCP declined in the
                                 step (of the peg_fallback islands declined as an impact's or
                                 a first contact's: the size the rule compared with its 8 000),
                                 0 when none was */
    int load_shared;         /* island solves whose LCP had many solutions (redundant supports:
                                a face on a face, a plate on balls) and whose answer load
                                sharing replaced by the limit of a vanishing compliance
                                (README "Redundant supports") */
    int load_kept;           /* island solves with redundant supports whose compliance limit
                                was not found as an LCP solution: Lemke's answer applied */
    int relinearizations;    /* ST96 §3.6 re-linearisations done (all sub-steps) */
    int relinearize_cut;     /* island sub-steps whose re-linearisation stopped at half of
                                pp_config.lcp_budget_seconds, on its work bound (pivots
                                weighted by LCP size, proportional to the cube of the first
                                LCP's; relinearize.c), at an iterate whose LCP grew past 1.25
                                times the first's on an island of 1 000 unknowns or more (not
                                solved: relinearize.c), or at an iterate whose LCP only the
                                bounded fallback answered (short of its acceptance: the budget
                                ran out, or Lemke failed) after exact answers: that answer is
                                not applied (counted in lcp_dropped, not in lcp_status,
                                lcp_residual, lcp_fallback), the best estimate is kept (the
                                step's first answer, or an iterate's before) */
    int relinearize_refused; /* island sub-steps whose re-linearisation did not converge and kept an
                                earlier estimate than the last (the one violating the
                                constraints least within the energy bound; README), or
                                converged above that bound and kept an answer within it */
    int relinearize_over;    /* island sub-steps whose re-linearisation converged to a fixed
                                point above the energy bound and kept it (no estimate within
                                the bound as feasible), left after the retries below */
    int substeps_retried;    /* how many times the step was run again from its start with the
                                sub-step of such a fixed point halved (at most 3 halvings a
                                sub-step; docs/design.md "A sub-step redone shorter"); 0 when
                                no island kept a fixed point above its bound */
    int positions_projected; /* island sub-steps whose re-linearisation did not converge and
                                whose kept estimate's end pose was moved onto the working
                                set's constraints (post-stabilisation: the smallest
                                mass-weighted displacement, velocities unchanged; at most
                                1e-6 m a body point, else not applied; docs/design.md) */
    double projection_largest; /* the largest displacement of a body point they applied, m */
    double time_total;       /* the whole pp_world_step */
    double time_stage[PP_STAGE_COUNT];
} pp_step_stats;

typedef struct pp_world pp_world;

/*
 * Create the pegplus world for an ODE world and the (top-level) space holding its geoms.
 * `space` may be NULL when all bodies are registered explicitly. `config` NULL = defaults.
 * On success *out receives the world; on failure *out is NULL and a message is logged.
 */
pp_status pp_world_create(dWorldID world, dSpaceID space, const pp_config *config,
                          pp_world **out);

/* Destroys the pegplus world and the convex geoms created by pp_convex_create with it.
 * ODE's world, space, bodies and other geoms are left untouched. NULL is a no-op. */
void pp_world_destroy(pp_world *world);

/*
 * Advance by h seconds, PP_MIN_STEP <= h <= PP_MAX_STEP, with the current model. On any error
 * nothing in ODE has changed (bodies keep their state and force accumulators, no joint is
 * made) and the next step can run once the input is fixed. PP_ERR_NO_MEMORY too: under
 * PP_MODEL_ODE the room for the step's contact list (pp_world_get_contacts) is taken before
 * dWorldStep, so a step that could not list its contacts is refused unstepped (with a program's
 * near callback the joints it made are in its own group, which it empties after pp_world_step
 * as after dWorldStep), never stepped with a short list. Under the pegplus models one thing
 * ODE keeps cannot be put back: a Transmission joint's gear phases, which getInfo2 advances
 * (ODE has no setter); the retried step is the clean one bit for bit while the gears turn at
 * most 1 rad a step, equal to rounding at 1.5 rad (docs/drop-in.md "Not in this slice").
 *
 * Every model rejects, with PP_ERR_INVALID_ARGUMENT and one message naming the object (its
 * dWorldID, dBodyID or dGeomID pointer and geom class) and the parameter by the ODE call that
 * sets it, before ODE is touched:
 *   world   gravity NaN/Inf; ERP outside [0, 1]; CFM negative, NaN or Inf; and under
 *           PP_MODEL_ODE the contact max correcting velocity (NaN, < 0), the contact surface
 *           layer (NaN, Inf, < 0), and with dWorldQuickStep its W (not finite and > 0) and
 *           iterations (< 1);
 *   bodies  (enabled, stepped; under PP_MODEL_ODE also the disabled ones dWorldStep would
 *           enable, joined to a stepped body by a joint or a contact) mass or inertia not
 *           finite and positive (definite) with a finite inverse, position,
 *           quaternion, velocities, force or torque accumulators or finite-rotation axis NaN
 *           or Inf, damping scales outside [0, 1], damping thresholds or maximum angular
 *           speed NaN or negative;
 *   geoms   (enabled, in the space tree) a NaN/Inf position or rotation (also through the body
 *           and the geom offset), plane parameters, or sphere, box, capsule, cylinder and ray
 *           dimensions that are not finite and >= 0, and a bounding box beyond the int cells
 *           of its dHashSpace (dSpaceCollide would abort; 2^31 cells of the geom's level);
 *   pairs   a surface from config.surface_fn that pp_config_validate would reject (the ode_*
 *           fields under PP_MODEL_ODE only), under the pegplus models a near callback's dContact
 *           with mu NaN or < 0, or (with dContactBounce) bounce outside [0, 1] or bounce_vel
 *           not finite and >= 0, and, under PP_MODEL_ODE, a dCollide contact with a
 *           NaN/Inf position, normal or depth (dConvex, trimesh and heightfield data have no
 *           getter; their contacts are checked instead).
 * Not checked: joint parameters; a plane given a NaN normal (dGeomPlaneSetParams turns it into
 * the plane (1, 0, 0, 0), so what pegplus can read is a valid plane); and, under PP_MODEL_ODE,
 * bodies pegplus cannot find (no geom in the space tree, no joint to a found body, not
 * registered), which dWorldStep steps all the same: register them to have them checked.
 */
pp_status pp_world_step(pp_world *world, double h);

/* The step sizes pp_world_step accepts, s. ODE divides by h (ERP/h, CFM/h, the LCP's 1/h); a
 * denormal h such as 1e-310 made 1/h infinite and aborted inside dWorldStep. At 1e-9 s, 1/h
 * stays far inside double range; a shorter step is better skipped by the caller. */
#define PP_MIN_STEP 1e-9
#define PP_MAX_STEP 1.0

/*
 * The program's own near callback as the source of contact settings (docs/drop-in.md). With
 * a callback set, pp_world_step replaces `dSpaceCollide(space, data, callback); dWorldStep`
 * (the program keeps its `dJointGroupEmpty(group)` after it), and config.surface/surface_fn
 * are not used:
 *   PP_MODEL_ODE       dSpaceCollide(space, data, callback) runs the callback unchanged (its
 *                      dCollide calls, its dContacts, its joints in its group), then
 *                      dWorldStep or dWorldQuickStep (config.ode_stepper): bit for bit the
 *                      program's own loop. pp_world_get_contacts lists the callback's
 *                      contact joints of the step (seen through the dJointCreateContact
 *                      wrappers below; impulses from their dJointFeedback).
 *   pegplus models     the callback is called once per candidate pair and step with that pair,
 *                      as a probe: its dCollide of the pair returns one synthetic touching
 *                      contact (depth 0, at the midpoint of the closest points, ODE's normal),
 *                      and the dContact it gives dJointCreateContact is recorded (the joint is
 *                      made in pegplus's own group, which is emptied when the callback
 *                      returns: ODE ends as it was). No contact joint = the pair does not
 *                      collide. Honoured: mu (dInfinity: no sliding), bounce and bounce_vel
 *                      (with dContactBounce; PLUS's e_min and v_capture); by the time stepper
 *                      also mu2/fdir1 (anisotropic friction), motion1/2/N, soft_erp/soft_cfm,
 *                      slip1/2 and rho/rho2/rhoN (rolling and spinning friction;
 *                      docs/drop-in.md). A finite mu without dContactApprox1_1 (ODE's force
 *                      limit), or rho without its axis's dContactApprox1_x (a torque limit),
 *                      is reported once per world through the log hook as not honoured yet.
 *                      A dJointFeedback the callback sets on its contact joint is filled
 *                      after the step with the force and torque pegplus's own contacts of
 *                      the pair applied over the step (impulse / h, as dWorldStep fills it).
 *                      A callback that reads depth or counts contacts sees depth 0 and one
 *                      contact.
 * Seeing the callback's calls: libpegplus.so exports dCollide and dJointCreateContact, which
 * forward to libode's outside a probe; a program linked with -lpegplus before -lode (what
 * pkg-config's and CMake's pegplus::pegplus link lines give) resolves to them. A program
 * linked statically (or with -lode first) calls pp_near_probe_collide and
 * pp_near_probe_joint_create_contact in its callback instead (they forward the same way).
 * A joint made behind pegplus's back is detected (its bodies' joint counts) and the step
 * refused with PP_ERR_UNSUPPORTED. callback NULL: back to config.surface/surface_fn.
 */
pp_status pp_world_set_near_callback(pp_world *world, void *data, dNearCallback *callback);
int pp_near_probe_collide(dGeomID o1, dGeomID o2, int flags, dContactGeom *contact, int skip);
dJointID pp_near_probe_joint_create_contact(dWorldID world, dJointGroupID group,
                                            const dContact *contact);

/* Switch the contact model between steps. */
pp_status pp_world_set_model(pp_world *world, pp_model model);
pp_model pp_world_get_model(const pp_world *world);

/* Replace the whole configuration (validated first; on error the old one stays). */
pp_status pp_world_set_config(pp_world *world, const pp_config *config);
pp_config pp_world_get_config(const pp_world *world);

/* One contact of the last step. Under PP_MODEL_ODE: dCollide's contacts of the step (with a
 * near callback: the dContacts of the contact joints it made) with ODE's normal turned round
 * (g1 to g2), gap = -depth, and the impulses (h times the force) of their contact joints on
 * g2's body. Under a pegplus model: geoms (g2 may be a static geom), the
 * contact point on g1, the unit normal from g1 to g2, the gap and the impulses the time stepper
 * applied (N s; normal >= 0, friction in the tangent plane). Without re-linearisation the
 * contacts and gaps are those at the start of the step; with it (the default) those of the last
 * predicted end-of-step pose q^, the gap linearised there, psi(q^) - h G^T nu^ (its impulses are
 * the last solve's, also when the step kept an earlier estimate: relinearize_refused). */
typedef struct pp_contact_info {
    dGeomID g1, g2;
    double position[3];
    double normal[3];
    double gap;
    double normal_impulse;
    double friction_impulse[3];
} pp_contact_info;

/* The contacts of the last step, whatever the model (none after a refused step);
 * *out valid until the next step or destroy. Returns the count. */
int pp_world_get_contacts(const pp_world *world, const pp_contact_info **out);

/* One contact of an impact (PLUS, stage 6b) in the last step: geoms (g2 may be static), the
 * contact point, the unit normal from g1 to g2, PLUS's total impulse on g2 (its opposite on
 * g1; impulse . normal >= 0, the rest is friction) and the velocity of g2's material point
 * there relative to g1's, just before and just after the impact (the time stepper then goes
 * on from there). World frame, N s and m/s. Contacts of one impact share `impact` (0, 1, ...
 * in the order the step resolved them). */
typedef struct pp_impact_info {
    dGeomID g1, g2;
    double position[3];
    double normal[3];
    double impulse[3];
    double velocity_before[3];
    double velocity_after[3];
    int impact;
} pp_impact_info;

/* The impact contacts of the last step (none under PP_MODEL_ODE); *out valid until the next
 * step or destroy. Returns the count. */
int pp_world_get_impacts(const pp_world *world, const pp_impact_info **out);

/* Statistics of the last step (valid until the next step or destroy). */
const pp_step_stats *pp_world_get_stats(const pp_world *world);

/*
 * The solver's warm start, saved with the bodies' state so that a program restarted from
 * saved poses and velocities steps on as the running program would have (MuJoCo keeps its
 * warm start in its state the same way: mjSTATE_WARMSTART). What the next step starts from:
 * the Lemke bases and the sticking solve's answers of the last step, kept by constraint
 * identity (docs/design.md "Warm start by constraint identity"). Without it, a restart from
 * saved poses solves its first LCPs cold: a settled heap of 20 boxes took 942 pivots and
 * ~100 times a warm step's time.
 *
 * pp_world_save_warm_start: *text gets the warm start as NUL-terminated text (malloc'ed; the
 * caller frees it with free()). Version 1: "pegplus-warm-start 1", the model of the step that
 * made it, the world's geoms (their count and ODE classes, in the order pegplus first saw
 * them: for a freshly built scene, its space's order) and joints (their dJointType), then one
 * line per kept record (the geoms and joints it belongs to by those indices; doubles as hex
 * floats, so a restored warm start is the saved one bit for bit), then "end
 * pegplus-warm-start". Records of geoms no longer in the world are left out.
 *
 * pp_world_restore_warm_start: the warm start of `text` becomes the world's, replacing the one
 * it had, for a world built the same way (the same geoms created in the same order, the same
 * joints): call it after building the scene and setting the bodies' state, before the first
 * step, and before any dSpaceCollide of the program's. Refused with PP_ERR_INVALID_ARGUMENT,
 * one message naming what differs and the world's warm start left as it was (all or nothing),
 * when the text is malformed, when the count of geoms or joints differs, when the geom at an
 * index is of another class (ODE's words, e.g. "geom 3 ... is a dBoxClass in the warm start,
 * a dSphereClass ... in this world") or a joint of another type, and when it was saved under
 * another model than the world's current one (the standard model's sets and PEG's are
 * different LCPs: a warm start is refused, never half used, under the other model). A
 * restored warm start is what the next step reads: with the bodies' positions, quaternions
 * and velocities saved and set again, the restarted steps are bit for bit those of the
 * running world set from the same saved state (integration test check_warm_start_state).
 * Set, not kept: ODE's dBodySetQuaternion normalises the quaternion it is given, and a unit
 * quaternion normalised again may change in its last bit, so a restart can match a run that
 * was never set from its saved state only to rounding (heap50: step 2 differed).
 * Limits: joints are numbered from the bodies pegplus steps, and a body disabled by ODE's
 * auto-disable is not stepped, so save and restore with the same bodies enabled (a joint of
 * disabled bodies only is not numbered: the counts differ and the text is refused, or, where
 * they happen to agree, its records meet other joints and are only a worse start). A geom
 * of a class the program registered (dCreateGeomClass) is written dUserClass<N>. The doubles
 * are C's %a, read by strtod: save and restore under the same LC_NUMERIC (the "C" locale
 * unless the program calls setlocale).
 * Errors: save PP_ERR_NULL_ARGUMENT (world or text NULL) or PP_ERR_NO_MEMORY (*text NULL);
 * restore PP_ERR_NULL_ARGUMENT, PP_ERR_INVALID_ARGUMENT as above (a record longer than its
 * line is malformed, refused before any memory is asked for it), PP_ERR_NO_MEMORY.
 */
pp_status pp_world_save_warm_start(pp_world *world, char **text);
pp_status pp_world_restore_warm_start(pp_world *world, const char *text);

/*
 * Bodies ODE cannot show us (no geom in the space tree, no joint to one that has) are managed
 * once registered. A registered body must belong to the world's ODE world; registering twice
 * is harmless.
 *
 * Lifetime: the world keeps a registered dBodyID until pp_world_unregister_body. Call it
 * before dBodyDestroy: ODE has no destroy callback, and any question pegplus could ask about
 * a dBodyID (dBodyGetWorld, dBodyIsEnabled, ...) reads the body's memory, so a destroyed body
 * cannot be detected. Left registered, it is read after free at the next pp_world_step
 * (AddressSanitizer reports a heap-use-after-free), or, if ODE reused its memory for a new
 * body, that body is stepped in its place. Bodies found through the space tree or joints need
 * no unregistering: they are found afresh every step (after dBodyDestroy their geoms stay in
 * the space as static geoms, which is what ODE does). pp_world_unregister_body reads nothing
 * of the body (only compares pointers), so it may also be called after dBodyDestroy as long
 * as no step ran in between. PP_ERR_INVALID_ARGUMENT when the body is not registered.
 */
pp_status pp_world_register_body(pp_world *world, dBodyID body);
pp_status pp_world_unregister_body(pp_world *world, dBodyID body);

/*
 * Convex polytopes. ODE keeps no copy of a dConvex's data and has no getter for it, so pegplus
 * records the polytope itself:
 *  - pp_convex_create builds the convex hull of `count` points (xyz triples, body frame, metres)
 *    with qhull, creates the dConvex in `space` and records its polytope; the geom's arrays are
 *    owned by the pegplus world, which destroys the geom in pp_world_destroy. The hull costs
 *    O(n log n) (100 000 points on a sphere: about 1 s, half of it in qhull). ODE's
 *    dCreateConvex is O(E^2) in the hull's edges (0.9 s for 48 000) and its convex-convex
 *    test O(E1 E2), so a hull of more than 1024 vertices is given to ODE as the hull of 1024
 *    of its vertices (its support points in 1024 directions spread over the sphere), with a
 *    warning giving how far the exact hull reaches beyond that shape's faces (4 mm on a unit
 *    sphere): PP_MODEL_ODE collides that smaller shape, the pegplus models the exact hull.
 *  - pp_world_register_convex records the polytope of a dConvex the caller created, given the
 *    same points (the hull of them must be the geom's shape).
 *    A cheap consistency check compares the geom's ODE bounding box with the hull's.
 *  - pp_convex_destroy destroys a geom made by pp_convex_create (or forgets a registered one).
 *    Do not call dGeomDestroy on a geom made by pp_convex_create, and destroy the pegplus world
 *    before the space that holds such geoms (dSpaceDestroy would free them under us).
 *  - pp_world_unregister_convex forgets a geom registered with pp_world_register_convex (the
 *    geom stays the caller's); PP_ERR_INVALID_ARGUMENT for a geom pegplus made or does not
 *    know. Call it before dGeomDestroy on a registered dConvex: pegplus keeps the dGeomID and
 *    only compares it with the geoms of the space, so a stale one is not read, but a new
 *    dConvex that ODE allocates at the same address would be given the old polytope by the
 *    pegplus models. Other geoms need nothing: the space tree is walked afresh every step.
 * The points are in the geom's frame; put the body's centre of mass at the origin (ODE's
 * convention), e.g. with pp_polytope_mass_properties. A dConvex that is neither made nor
 * registered here is not modelled by the pegplus models, nor are ray geoms, trimeshes and
 * heightfields on a body, or heightfields whose samples pegplus did not see (below): each
 * such geom is named once (dGeomID, class, body) through the log hook
 * and collides with nothing under them; use PP_MODEL_ODE for scenes that need them.
 * Degenerate point sets (fewer than 4 distinct points, coplanar, NaN) return PP_ERR_DEGENERATE
 * or PP_ERR_INVALID_ARGUMENT with a message, and nothing is created.
 */
pp_status pp_convex_create(pp_world *world, dSpaceID space, const double *points, int count,
                           dGeomID *out);
pp_status pp_world_register_convex(pp_world *world, dGeomID convex, const double *points,
                                   int count);
pp_status pp_convex_destroy(pp_world *world, dGeomID convex);
pp_status pp_world_unregister_convex(pp_world *world, dGeomID convex);

/* The exact hull pegplus keeps for a dConvex made by pp_convex_create or registered with
 * pp_world_register_convex (pegplus/geometry.h's pp_polytope: vertices in the geom's frame, m,
 * faces counter-clockwise seen from outside), for readers such as trajectory writers, since
 * ODE has no getter. Read-only; owned by the pegplus world and valid until the geom is
 * destroyed or forgotten (pp_convex_destroy, pp_world_unregister_convex, pp_world_destroy).
 * NULL, without a message, when `world` or `convex` is NULL or pegplus does not know the geom. */
const struct pp_polytope *pp_convex_polytope(const pp_world *world, dGeomID convex);

/*
 * Heightfields. ODE keeps a heightfield's samples (or reads them through its callback) and has
 * no getter for them, so the pegplus models learn them when the data is built: libpegplus.so
 * and pegplus-run watch dGeomHeightfieldDataBuildDouble/Single/Short/Byte/Callback (and
 * dGeomHeightfieldDataDestroy) of a program linked with -lpegplus before -lode; a static link
 * (or data built before libpegplus was loaded) registers them here, with the arguments given
 * to dGeomHeightfieldDataBuildDouble (copy_heights = its bCopyHeightData: 0 keeps the
 * pointer, which must then stay valid as for ODE). Registration is per world and wins over
 * a watched build; pp_world_unregister_heightfield forgets it (call it before
 * dGeomHeightfieldDataDestroy). A static heightfield (no body), finite (wrap = 0), is
 * terrain under the pegplus models (docs/design.md "Terrain"); static trimeshes need nothing
 * (ODE gives their triangles). PP_ERR_NULL_ARGUMENT, PP_ERR_INVALID_ARGUMENT (width, depth
 * not finite and > 0, fewer than 2 samples each way, scale/offset/thickness not finite),
 * PP_ERR_NO_MEMORY.
 */
pp_status pp_world_register_heightfield(pp_world *world, dHeightfieldDataID data,
                                        const double *heights, int copy_heights, double width,
                                        double depth, int width_samples, int depth_samples,
                                        double scale, double offset, double thickness, int wrap);
pp_status pp_world_unregister_heightfield(pp_world *world, dHeightfieldDataID data);

#ifdef __cplusplus
}
#endif
#endif /* PEGPLUS_PEGPLUS_H */
