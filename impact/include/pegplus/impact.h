/*
 * pegplus/impact.h — the PLUS impact model (Uchida, Sherman, Delp 2015, "Making a
 * meaningful impact", Proc. R. Soc. A 471:20140859; notes in docs/references.md).
 *
 * One call resolves one impact event among m proximal contacts: Poisson restitution
 * with the velocity-dependent COR of Fig. 2, impact rounds (Algorithm 2, sequential:
 * observers do not participate, expanders carry their known expansion impulse),
 * sliding / rolling / impending-slip intervals (eqs. 2.7-2.9, step lengths 2.13-2.14),
 * the active-set loop of Algorithm 1 and minimum-norm least squares (Table 1) for
 * load spreading over redundant contacts.
 *
 * Conventions (the paper's, §2(b)):
 *  - Each contact k owns three consecutive components 3k+0, 3k+1, 3k+2 = (x, y, z):
 *    x and y span the tangent plane, z is the normal. With contact frame rows
 *    (t1, t2, n), t1 x t2 = n is recommended but not required.
 *  - v (m/s) is the contact-space velocity: v_z = d(psi)/dt, positive when separating
 *    (pegplus/base.h: n points from body A to body B and the Jacobian row maps body
 *    velocities to the gap rate). v_xy is the slip of B relative to A.
 *  - pi (N s) is force-signed: the generalized impulse is G^T pi, so
 *        v_end = v + A pi,   A = G M^-1 G^T   (eq. 2.2),
 *    pi_z >= 0 pushes the bodies apart, and friction pi_xy opposes slip.
 *  - A (s/kg-ish: contact velocity per unit impulse) is 3m x 3m, row-major, symmetric
 *    positive semi-definite with a positive normal diagonal. It may be singular (redundant
 *    contacts): the minimum-norm impulse is chosen (Table 1). A tangent diagonal may be 0
 *    (exactly, with its row and column): a direction the contact cannot slip in, such as
 *    out of the plane of a hinged mechanism (pp_plus_delassus_constrained).
 *  - Kinetic energy change of the impact: dKE = pi . v + 1/2 pi^T A pi (J), exact for
 *    any M since u^T M du + 1/2 du^T M du with du = M^-1 G^T pi.
 *
 * Ownership: every pointer passed in stays owned by the caller and is read only during
 * the call; output arrays are caller-owned and written only on return. The solver
 * handle owns its workspace, sized once for a maximum contact count; pp_plus_solve never
 * allocates.
 */
#ifndef PEGPLUS_IMPACT_H
#define PEGPLUS_IMPACT_H

#include "pegplus/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Component index inside a contact's block of three. */
enum { PP_PLUS_X = 0, PP_PLUS_Y = 1, PP_PLUS_Z = 2 };

/* ------------------------------------------------------------------------------------ */
/* Per-contact material parameters                                                       */
/* ------------------------------------------------------------------------------------ */

/* Restitution and friction of one contact (paper §2c-d, Fig. 2, Table A1). */
typedef struct pp_plus_contact_params {
    double mu;        /* Coulomb (dynamic) friction coefficient, >= 0; 0 = frictionless */
    double e_min;     /* Poisson COR reached at approach speeds >= v_plastic, in [0, 1] */
    double v_capture; /* m/s, >= 0: approach speeds <= v_capture give e = 0 (capture) */
    double v_plastic; /* m/s, >= v_capture: the COR line reaches e_min here */
} pp_plus_contact_params;

/* Paper Table A1 values: mu 0.5 (not in the table), e_min 0.5, v_capture 0.01 m/s,
 * v_plastic 0.1 m/s. */
pp_plus_contact_params pp_plus_contact_params_default(void);

/* The COR of Fig. 2 at approach speed s = -v_z (m/s):
 *   s <= v_capture         -> 0
 *   s >= v_plastic         -> e_min
 *   otherwise              -> 1 - (1 - e_min) s / v_plastic
 * (Fig. 2; the line runs from (0, 1) to (v_plastic, e_min), so e jumps from 0 to just
 * under 1 at v_capture). Negative s (separating) gives 0. */
double pp_plus_cor(const pp_plus_contact_params *params, double approach_speed);

/* ------------------------------------------------------------------------------------ */
/* Solver configuration                                                                   */
/* ------------------------------------------------------------------------------------ */

typedef struct pp_plus_config {
    double v_transition;       /* m/s, >= 0: slip speed separating sliding from rolling (2.9, 2.12) */
    double theta_max;          /* rad, in (0, pi]: largest sliding-direction change per interval (2.14) */
    double alpha_min;          /* in (0, 1]: smallest step length alpha_DC may be clamped to (2.14) */
    double approach_tolerance; /* m/s, >= 0: a contact compresses in a round when v_z < -this */
    double newton_tolerance;   /* relative residual at which Newton stops (impending slip) */
    double rcond;              /* rank threshold of the complete orthogonal factorisation */
    int max_rounds;            /* cap on impact rounds (Algorithm 2 outer loop), >= 1 */
    int max_intervals;         /* cap on intervals per round, >= 1 */
    int max_active_set_passes; /* cap per interval (Algorithm 1 loop); <= 0: 3m + 2 */
    int max_newton_iterations; /* cap per Newton stage of the impending-slip solve (a
                                  solve runs up to ~7 continuation stages), >= 1 */
} pp_plus_config;

/* The paper's Table A1 values where it gives them: v_transition 0.1 m/s,
 * theta_max 0.01 rad; alpha_min 1e-3, approach_tolerance 1e-6 m/s, newton_tolerance
 * 1e-12, rcond 1e-10, max_rounds 50, max_intervals 1000 (V7 termination
 * bounds, docs/references.md), max_active_set_passes 0 (= 3m + 2), max_newton_iterations 50. */
pp_plus_config pp_plus_config_default(void);

/* ------------------------------------------------------------------------------------ */
/* Problem, result and trace                                                               */
/* ------------------------------------------------------------------------------------ */

/* One impact among the proximal contacts, in contact space. */
typedef struct pp_plus_problem {
    int contact_count;                    /* m >= 0; m = 0 is a valid no-op */
    const double *delassus;               /* A, 3m x 3m row-major (see conventions above) */
    const double *velocity;               /* v, 3m pre-impact contact velocities, m/s */
    const pp_plus_contact_params *params; /* m entries */
} pp_plus_problem;

/* State of a contact's normal during one interval (Table 1, §3b). */
typedef enum pp_plus_normal_state {
    PP_PLUS_OBSERVING = 0,         /* v_z >= 0 at the round start: pi = 0 */
    PP_PLUS_COMPRESSING = 1,       /* approaching: A_z pi = -v_z (2.3) */
    PP_PLUS_COMPRESSING_RELEASED = 2, /* compressing, but its normal was dropped from the
                                         active set (pi_z < 0 otherwise): pi = 0 */
    PP_PLUS_EXPANDING = 3          /* compressed last round: pi_z = remaining e pi_comp (2.4) */
} pp_plus_normal_state;

/* State of a contact's friction during one interval (2.7-2.9). */
typedef enum pp_plus_friction_state {
    PP_PLUS_FRICTION_NONE = 0, /* observing, released, or mu = 0: pi_xy = 0 */
    PP_PLUS_ROLLING = 1,       /* A_xy pi = -v_xy (2.7) */
    PP_PLUS_SLIDING = 2,       /* pi_xy = -mu pi_z v_start / |v_start| (2.8, 2.9 first case) */
    PP_PLUS_IMPENDING = 3      /* pi_xy = -mu pi_z v_end / |v_end| (2.9 second case) */
} pp_plus_friction_state;

/* What limited an interval's step length alpha. */
typedef enum pp_plus_step_limit {
    PP_PLUS_LIMIT_NONE = 0,           /* alpha = 1 */
    PP_PLUS_LIMIT_CLOSEST_POINT = 1,  /* alpha_CP, a slide-to-roll transition (2.12-2.13) */
    PP_PLUS_LIMIT_DIRECTION_CHANGE = 2 /* alpha_DC, the theta_max limit (2.14) */
} pp_plus_step_limit;

typedef struct pp_plus_round_record {
    int first_interval; /* index into pp_plus_trace.intervals */
    int interval_count;
} pp_plus_round_record;

typedef struct pp_plus_interval_record {
    int round;                /* 0-based round of this interval */
    double alpha;             /* step length in (0, 1] */
    pp_plus_step_limit limit;
    int limiting_contact;     /* contact that set alpha, -1 if alpha = 1 */
    int active_set_passes;    /* Algorithm 1 loop passes */
    int newton_iterations;    /* summed over passes; 0 when every row was linear */
    int impending_fallbacks;  /* impending contacts left on their fixed guess direction
                                 because Newton found no root (see pp_plus_solve) */
} pp_plus_interval_record;

typedef struct pp_plus_contact_record {
    pp_plus_normal_state normal;
    pp_plus_friction_state friction;
    double cor;               /* e of this round (Fig. 2), from v_z at the round start */
    double impulse[3];        /* alpha pi applied to this contact in the interval, N s */
    double velocity_start[3]; /* contact velocity at the interval start, m/s */
    double velocity_end[3];   /* contact velocity at the interval end, m/s */
} pp_plus_contact_record;

/* Optional record of the impact process. The caller owns the arrays and sets the
 * capacities; the solver fills the counts. The record of contact k in interval i is
 * contacts[i * m + k], so `contacts` must hold interval_capacity * m records. When a
 * capacity is exceeded, recording stops, `truncated` is set, and the solve goes on. */
typedef struct pp_plus_trace {
    pp_plus_round_record *rounds;
    int round_capacity;
    pp_plus_interval_record *intervals;
    pp_plus_contact_record *contacts;
    int interval_capacity;
    int round_count;    /* records written */
    int interval_count; /* records written */
    int truncated;      /* 1 if some record did not fit */
} pp_plus_trace;

/* Bits of pp_plus_result.caps: which cap stopped or limited the solve. */
enum {
    PP_PLUS_CAP_ROUNDS = 1u << 0,
    PP_PLUS_CAP_INTERVALS = 1u << 1,
    PP_PLUS_CAP_ACTIVE_SET = 1u << 2
};

typedef struct pp_plus_result {
    /* caller-provided storage */
    double *impulse;         /* required, 3m: total impulse pi per contact (x, y, z), N s */
    double *velocity_change; /* optional (NULL), 3m: A pi, m/s */
    pp_plus_trace *trace;    /* optional (NULL) */
    /* filled by pp_plus_solve */
    int rounds;                   /* rounds run */
    int intervals;                /* intervals run, all rounds */
    unsigned caps;                /* PP_PLUS_CAP_* bits; 0 when the impact completed */
    int impending_fallbacks;      /* summed over intervals (pp_plus_interval_record) */
    double kinetic_energy_change; /* pi . v + 1/2 pi^T A pi, J */
} pp_plus_result;

/* ------------------------------------------------------------------------------------ */
/* Solver                                                                                 */
/* ------------------------------------------------------------------------------------ */

typedef struct pp_plus_solver pp_plus_solver;

/* Create a solver whose workspace fits up to max_contacts contacts (>= 1). The only
 * allocations of this module happen here. Returns PP_OK, PP_ERR_NULL_ARGUMENT,
 * PP_ERR_INVALID_ARGUMENT or PP_ERR_NO_MEMORY (then *out = NULL). */
pp_status pp_plus_solver_create(int max_contacts, pp_plus_solver **out);
void pp_plus_solver_destroy(pp_plus_solver *solver); /* NULL is a no-op */
int pp_plus_solver_capacity(const pp_plus_solver *solver);

/* Resolve one impact. `config` may be NULL (pp_plus_config_default()).
 * Returns
 *  - PP_OK: the impact completed (no approaching contact and no expansion left);
 *  - PP_ERR_SOLVER: a round, interval or active-set cap was reached (result->caps says
 *    which); the best-so-far impulse
 *    (everything applied up to the cap) is written, and contacts may still approach;
 *  - PP_ERR_NUMERICAL: an interval produced a non-finite value (or LAPACK failed); the
 *    impulse accumulated before that interval is written (always finite);
 *  - PP_ERR_NULL_ARGUMENT / PP_ERR_INVALID_ARGUMENT: rejected at the boundary with a
 *    message to the log hook (NULL pointer, m < 0 or above the capacity, NaN/Inf in A or
 *    v, A not symmetric or not positive-semidefinite-looking (normal diagonal <= 0,
 *    tangent diagonal < 0, an
 *    off-diagonal above sqrt(A_ii A_jj)), mu < 0, e_min outside [0, 1], v_capture < 0,
 *    v_plastic < v_capture, bad config); nothing is written.
 * Impending slip (2.9b) is solved by Newton's method. When it reaches
 * max_newton_iterations without a root, that interval keeps the impending contacts'
 * friction on the cone along their initial guess direction (opposite to the rolling
 * impulse that left the cone); every row still holds, and the fallback is counted in
 * impending_fallbacks rather than treated as a failure. */
pp_status pp_plus_solve(pp_plus_solver *solver, const pp_plus_config *config,
                        const pp_plus_problem *problem, pp_plus_result *result);

/* Relative round-off allowed in an impact's energy change pi . v + 1/2 pi^T A pi, against
 * the size of its two terms, |pi . v| + 1/2 pi^T A pi (about 1e6 machine epsilons: the sums
 * over 3m components and the solver's accumulated intervals). */
#define PP_PLUS_ENERGY_ROUNDOFF 1e-10

/* The invariant of an impact: it must not raise the kinetic energy, pi . v + 1/2 pi^T A pi
 * <= round-off (PP_PLUS_ENERGY_ROUNDOFF) for the problem's v and A. When result->impulse
 * breaks it, the impulse (and velocity_change, if given) is scaled by s = -2 pi.v / pi^T A pi
 * (0 when pi . v >= 0), the most elastic answer along pi that gains no energy (one
 * frictionless contact: restitution capped at 1), kinetic_energy_change is set to the scaled
 * answer's, and 1 is returned; otherwise nothing changes but kinetic_energy_change, which is
 * recomputed, and 0 is returned. PLUS with e <= 1 keeps the invariant; this is the
 * guard against a solver answer that does not. */
int pp_plus_limit_energy(const pp_plus_problem *problem, pp_plus_result *result);

/* ------------------------------------------------------------------------------------ */
/* Body form: contacts between rigid bodies                                               */
/* ------------------------------------------------------------------------------------ */

/* A free rigid body. Its generalized velocity is nu = (v, w): COM velocity and angular
 * velocity, world frame (6 numbers). Static bodies are index -1 in a Jacobian, or a
 * body with inverse_mass = 0 and a zero inverse inertia. */
typedef struct pp_plus_body {
    double inverse_mass;       /* 1/kg, >= 0 */
    double inverse_inertia[9]; /* world frame, row-major, 1/(kg m^2), symmetric PSD */
} pp_plus_body;

/* Jacobian rows of one contact: v_c = sum_s row[c][s] . nu_{body[s]} for c = x, y, z. */
typedef struct pp_plus_contact_jacobian {
    int body[2];         /* body indices (A, B); -1 = static world */
    double row[3][2][6]; /* [component][side][v(3), w(3)] */
} pp_plus_contact_jacobian;

/* Jacobian of a point contact at world point p with frame rows (t1, t2, n), n from A
 * to B: v = P (v_B + w_B x (p - c_B) - v_A - w_A x (p - c_A)), so the row of direction
 * d is (d, (p - c_B) x d) for B and (-d, -(p - c_A) x d) for A. com_a / com_b are read
 * only when the body index is >= 0. frame is row-major (rows t1, t2, n). */
pp_status pp_plus_point_contact_jacobian(int body_a, const double com_a[3], int body_b,
                                         const double com_b[3], const double point[3],
                                         const double frame[9],
                                         pp_plus_contact_jacobian *out);

/* A = J M^-1 J^T, 3m x 3m row-major. Bodies are indexed 0..body_count-1. */
pp_status pp_plus_delassus(int body_count, const pp_plus_body *bodies, int contact_count,
                           const pp_plus_contact_jacobian *jacobians, double *delassus);

/* v = J nu (3m) from body velocities nu (6 per body). */
pp_status pp_plus_contact_velocity(int body_count, const double *body_velocity,
                                   int contact_count,
                                   const pp_plus_contact_jacobian *jacobians, double *velocity);

/* d nu = M^-1 J^T pi (6 per body, overwritten) for contact impulses pi (3m). */
pp_status pp_plus_body_velocity_change(int body_count, const pp_plus_body *bodies,
                                       int contact_count,
                                       const pp_plus_contact_jacobian *jacobians,
                                       const double *impulse, double *body_velocity_change);

/* ------------------------------------------------------------------------------------ */
/* Joint space: contacts on bodies joined by bilateral constraints                        */
/* ------------------------------------------------------------------------------------ */

/*
 * The paper poses PLUS for multibody systems with bilateral constraints (eq. 2.1a-b:
 * M du - G_b^T pi_b - G^T pi = 0, G_b (u + du) = 0) and then sets m_b = 0 for clarity.
 * Here the bodies are free rigid bodies (nu, W = M^-1 block diagonal) and the joints are
 * equality rows J_E (= G_b) that must hold through the impact, J_E du = 0. Eliminating the
 * joint impulse p_E (= pi_b) gives
 *     p_E = -K^-1 J_E W G^T pi,   K = J_E W J_E^T,
 *     du  = W_c G^T pi,           W_c = W - W J_E^T K^-1 J_E W,
 *     A   = G W_c G^T             (eq. 2.2's Delassus operator in joint space),
 * so a contact on a jointed body moves the whole mechanism, and the joints do no work in
 * the impact. W_c is the inverse of the mechanism's mass seen through the free bodies'
 * coordinates; pi . v + 1/2 pi^T A pi is still the impact's kinetic energy change when the
 * rows hold before it (J_E nu = 0; in general the joint impulse adds p_E . J_E nu).
 * Difference from eq. 2.1b: the impact leaves J_E nu as it found it (du, not u + du, obeys
 * the rows): the time stepper that runs before and after owns the rows' drift correction
 * (ODE's ERP term), so the impact neither adds nor removes constraint violation.
 *
 * K is singular when rows are redundant (a closed loop of joints, a joint to the world
 * doubling another): only the rows of a numerically independent subset are kept
 * (pivoted Cholesky with rank detection, LAPACK dpstrf, on K scaled to a unit diagonal;
 * a row whose part independent of the kept ones is below 1e-5 of its own size, in the
 * mass metric, is dropped). That subset spans the same constraint space, so W_c is the
 * rigid limit (K + eps I)^-1 -> K^+ on the rows' span. No compliance (ODE's cfm) enters:
 * an impact takes no time, so a row's cfm / h has no h to divide by, and only the rigid
 * limit keeps J_E du = 0 whatever the step.
 */

/* One bilateral row: row[0] . nu_{body[0]} + row[1] . nu_{body[1]} = 0 must hold through
 * the impact. Units are the row's own (m/s for a linear row, rad/s for an angular one):
 * only the span of the rows matters. */
typedef struct pp_plus_bilateral_row {
    int body[2];         /* body indices; -1 = static world (that side is unused) */
    double row[2][6];    /* [side][v(3), w(3)], world frame, about each body's centre */
} pp_plus_bilateral_row;

/* The factorisation of one island's bilateral rows and its coupling to the contacts, kept
 * between pp_plus_delassus_constrained and pp_plus_body_velocity_change_constrained. It
 * owns its workspace, which grows to the largest problem seen (the only allocations of
 * this part). */
typedef struct pp_plus_joint_space pp_plus_joint_space;

pp_status pp_plus_joint_space_create(pp_plus_joint_space **out); /* PP_OK, NULL_ARGUMENT, NO_MEMORY */
void pp_plus_joint_space_destroy(pp_plus_joint_space *space);    /* NULL is a no-op */
/* Rank of the rows after the last pp_plus_delassus_constrained (independent rows kept). */
int pp_plus_joint_space_rank(const pp_plus_joint_space *space);

/* A = G W_c G^T (3m x 3m, row-major) for the contacts' Jacobians over body_count bodies and
 * row_count bilateral rows among them; with row_count = 0 it is pp_plus_delassus. Keeps
 * the factorisation in `space` for the velocity change. Rows whose bodies all have zero
 * inverse mass and inertia constrain nothing and are ignored. Returns PP_OK,
 * PP_ERR_NULL_ARGUMENT, PP_ERR_INVALID_ARGUMENT (bad body index or non-finite row),
 * PP_ERR_NO_MEMORY or PP_ERR_NUMERICAL (LAPACK failed). */
pp_status pp_plus_delassus_constrained(pp_plus_joint_space *space, int body_count,
                                       const pp_plus_body *bodies, int row_count,
                                       const pp_plus_bilateral_row *rows, int contact_count,
                                       const pp_plus_contact_jacobian *jacobians,
                                       double *delassus);

/* d nu = W_c G^T pi = W (G^T pi + J_E^T p_E) (6 per body, overwritten) for contact impulses
 * pi (3m), with the same bodies, rows and Jacobians as the pp_plus_delassus_constrained call
 * before it. row_impulse (row_count, may be NULL) receives p_E (N s for a linear row, N m s
 * for an angular one; 0 for rows left out as redundant). */
pp_status pp_plus_body_velocity_change_constrained(const pp_plus_joint_space *space,
                                                   int body_count, const pp_plus_body *bodies,
                                                   int row_count,
                                                   const pp_plus_bilateral_row *rows,
                                                   int contact_count,
                                                   const pp_plus_contact_jacobian *jacobians,
                                                   const double *impulse,
                                                   double *body_velocity_change,
                                                   double *row_impulse);

/* The bodies' twists nu (6 per body) projected in place onto the rows' null space in the mass
 * metric, nu -= W J_E^T K^-1 J_E nu (so J_E nu = 0 after), with the same bodies and rows as
 * the pp_plus_delassus_constrained call before it. The part removed is M-orthogonal to every
 * W_c G^T pi, so an impact's kinetic energy change is pi . v + 1/2 pi^T A pi exactly, whatever
 * J_E nu was, when v = G nu is read from the projected twists. Returns PP_OK,
 * PP_ERR_NULL_ARGUMENT, PP_ERR_INVALID_ARGUMENT (rows differ) or PP_ERR_NUMERICAL. */
pp_status pp_plus_joint_space_project(const pp_plus_joint_space *space, int body_count,
                                      const pp_plus_body *bodies, int row_count,
                                      const pp_plus_bilateral_row *rows, double *nu);

#ifdef __cplusplus
}
#endif
#endif /* PEGPLUS_IMPACT_H */
