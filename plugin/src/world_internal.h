/* Private to plugin/: the pegplus world and the plain-data body snapshot. */
#ifndef PP_PLUGIN_WORLD_INTERNAL_H
#define PP_PLUGIN_WORLD_INTERNAL_H

#include "pegplus/pegplus.h"
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

/* A convex geom whose polytope pegplus recorded (ODE has no getter for dConvex data). */
typedef struct pp_convex_record {
    dGeomID geom;
    int owned;                 /* created by pp_convex_create: destroyed with the world */
    double *planes;            /* ODE arrays that must outlive the geom (owned == 1) */
    double *points;
    unsigned *polygons;
    struct pp_polytope *polytope;
} pp_convex_record;

/* A shape's pose in its body's frame: world = R_b (R p_local) ... i.e. position
 * x_b + R_b p, rotation R_b R. */
typedef struct pp_shape_attachment {
    double p[3];
    double R[9];
} pp_shape_attachment;

/* Per-step arrays of stages 2-7: they grow to the peak and are reused (STYLE.md "Memory"). */
typedef struct pp_step_scratch {
    pp_shape *shapes;              /* stage 1: managed geoms as posed shapes */
    dGeomID *shape_geom;
    int *shape_body;               /* index into world->bodies, -1 = static */
    double *shape_motion;          /* h (|v| + |w| r): how far the shape can move in the step */
    pp_shape_attachment *attachment; /* body-frame pose of shapes on bodies */
    pp_aabb *aabbs;
    unsigned char *is_static;
    int shape_count, shape_capacity;

    pp_broadphase *broadphase;
    int *sap_index;                /* shape index of each broadphase box (planes are not boxed) */
    int sap_capacity;
    pp_pair *pairs;                /* candidate pairs, shape indices (stage 2); kept for the
                                      standard-model fallback of stage 7 */
    int pair_count, pair_capacity;

    pp_contact *contacts;          /* stage 4 */
    int contact_count, contact_capacity;
    double *restitution;           /* 2 per contact: the pair's bounce (e_min), bounce_vel */
    int restitution_capacity;

    struct pp_plus_solver *plus;   /* stage 6 */
    int plus_capacity;
    double *plus_work;             /* A (9 m^2), v, pi (3 m each), body dnu (6 nb) */
    size_t plus_work_capacity;
    int *plus_contact, *plus_island;
    int plus_index_capacity;
    int impacts;                   /* impacts resolved this step */

    pp_contact_info *info;         /* pp_world_get_contacts */
    int info_count, info_capacity;

    pp_mlcp_workspace *mlcp;       /* stage 7 */
    int mlcp_bodies, mlcp_contacts, mlcp_directions;
    pp_mlcp_body *mlcp_body;
    int mlcp_body_capacity;
    double *normal_impulse, *friction_vector;
    int normal_capacity, friction_capacity;
    double *velocity;
    int velocity_capacity;

    /* Warm start (issue 3): the previous step's contact keys and final LCP basis. */
    unsigned char *basis;
    int basis_size, basis_capacity;
    struct pp_contact_key *keys;
    int key_count, key_capacity;

    /* Stage 5 constraint sets (pegplus/peg.h). Under PP_MODEL_STANDARD every contact is its
     * own U set; under PP_MODEL_PEG polytope pairs get PEG's U/I/X sets, whose secondaries
     * carry no impulse (primary[c] = 0). */
    pp_peg_set *sets;
    int set_count, set_capacity;
    unsigned char *primary;
    int primary_capacity;
    pp_peg_builder *peg_builder;
    double *pose_work;             /* posed polytope views of the pair being classified */
    int pose_work_capacity;
    pp_peg_workspace *peg;         /* stage 7 under PP_MODEL_PEG */
    int peg_bodies, peg_contacts, peg_sets, peg_directions;
    double *peg_slack;
    int peg_slack_capacity;
    pp_peg_set *key_sets;          /* warm start: the previous step's set layout */
    int key_set_count, key_set_capacity;

    /* ST96 §3.6 re-linearisation (pp_config.relinearize_iterations) */
    double *pose_saved;            /* 16 per body: x, q, R at the start of the step */
    int pose_saved_capacity;
    double *nu_hat;                /* 6 per body: the velocity estimate that predicts q^{l+1} */
    int nu_hat_capacity;
    double *nu_kept;               /* 6 per body: the last estimate within the energy bound */
    int nu_kept_capacity;
    /* Its working set (ST96 §4): every constraint set of feature contacts met in the step, at
     * q^l or at a predicted pose; work_sets index work_contacts, 3 restitution values each. */
    pp_peg_set *work_sets;
    int work_set_count, work_set_capacity;
    pp_contact *work_contacts;
    int work_contact_count, work_contact_capacity;
    double *work_restitution;
    int work_restitution_capacity;
    int work_model;                /* the model whose sets they are */
} pp_step_scratch;

struct pp_world {
    dWorldID ode_world;
    dSpaceID space;
    pp_config config;
    pp_step_stats stats;

    dJointGroupID contact_group;   /* PP_MODEL_ODE contact joints */

    dBodyID *registered;           /* pp_world_register_body */
    int registered_count, registered_capacity;

    pp_body *bodies;               /* snapshot of the managed bodies */
    int body_count, body_capacity;

    dGeomID *geoms;                /* geoms of the space tree (leaves, no spaces) */
    int geom_count, geom_capacity;

    pp_convex_record *convexes;
    int convex_count, convex_capacity;

    struct pp_box_record *boxes;   /* the polytope of each box size seen (convex.c) */
    int box_count, box_capacity;

    int warned_auto_disable;
    int warned_unsupported_class[16];
    int warned_unregistered_convex;

    pp_step_scratch scratch;
};

/* ode_bridge.c: discovery, validation, snapshot and write-back (stages 1 and 9). */
pp_status pp_bridge_collect(pp_world *world);
pp_status pp_bridge_validate(const pp_world *world);
pp_status pp_bridge_snapshot(pp_world *world, double h);
pp_status pp_bridge_write_back(pp_world *world);
int pp_bridge_body_has_joints(dBodyID body);

/* integrate.c: ODE's free-body update on plain data (stage 8 and the velocity part of 7). */
void pp_body_apply_external_impulse(pp_body *body, const double gravity[3], double h);
void pp_body_integrate_pose(pp_body *body, double h);
int pp_body_is_finite(const pp_body *body);

/* ode_baseline.c: PP_MODEL_ODE. */
pp_status pp_ode_baseline_step(pp_world *world, double h);

/* convex.c */
void pp_convex_records_free(pp_world *world);
const pp_polytope *pp_convex_find(const pp_world *world, dGeomID geom);
const pp_polytope *pp_box_polytope(pp_world *world, const double lengths[3]);

/* ode_bridge.c: the managed geoms as pp_shapes (stage 1). */
pp_status pp_bridge_shapes(pp_world *world);

/* contact_stages.c: stages 2-7 of the pegplus models. */
void pp_stage_pose_shapes(pp_world *world, double dt);
pp_status pp_stage_broadphase(pp_world *world);   /* candidate pairs into scratch.pairs */
pp_status pp_stage_contacts(pp_world *world);     /* stages 3-5 on scratch.pairs */
pp_status pp_stage_time_step(pp_world *world, double h);

/* impact_stage.c: stage 6 (PLUS) and the time of the next impact. */
pp_status pp_stage_impact(pp_world *world);
double pp_time_to_impact(const pp_world *world, double remaining);
/* The gap rate dpsi/dt = g_a . nu_a + g_b . nu_b of contact c (PEG Eq 7 row) for the twists
 * nu_a, nu_b (6 each: linear, angular; NULL for a static side), the Jacobian taken about the
 * bodies' current centres. */
double pp_contact_gap_rate(const pp_world *world, const pp_contact *c, const double *nu_a,
                           const double *nu_b);
void pp_step_scratch_free(pp_step_scratch *scratch);

/* Grow a dynamic array to hold at least `need` elements of `size` bytes. */
pp_status pp_grow(void **array, int *capacity, int need, size_t size);

double pp_now_seconds(void);

void pp_quaternion_to_rotation(const double q[4], double R[9]);
int pp_invert_inertia(double out[9], const double inertia[9]);
const char *pp_body_problem(const pp_body *body);
int pp_pair_surface(const pp_world *world, dGeomID g1, dGeomID g2, pp_surface *surface);

#endif
