/*
 * pegplus/mlcp.h — the Stewart–Trinkle time-stepping subproblem with a friction pyramid
 * (Stewart & Trinkle 1996 Eqs 25–29; PEG Eqs 3–10), reduced to an LCP by eliminating the
 * velocities (Schur complement, ST96 Eq 17/29) and solved with Lemke (pegplus/lcp.h).
 *
 * Plain data in, plain data out; no ODE. Units SI; vectors world frame; impulses p = h λ.
 *
 * Bodies. Body b has inverse mass m_b^-1, world-frame inverse inertia J_b^-1 and the FREE
 * velocity nu*_b = nu^l_b + h M_b^-1 lambda_ext,b (v*, w*): the velocity the body would have
 * at the end of the step without contact. A contact's body index -1 is static ground (no
 * velocity). A body with inv_mass 0 and inv_inertia 0 is kinematic: infinite mass, its
 * given velocity enters the gap rates and is returned unchanged.
 *
 * Contacts (pegplus/features.h pp_contact; kind, shape and feature fields are ignored).
 * C = {A, B, p_a, n, psi, mu}: n the unit normal from A to B, p_a the point on A, psi the gap,
 * p_b = p_a + psi n, lever arms r_a = p_a - x_A and r_b = p_b - x_B. Jacobian columns
 * (PEG Sec. 2; docs/references.md "PEG conventions"):
 *     normal          A: [-n;   -(r_a x n)]      B: [n;   r_b x n]      so G_n^T nu = dpsi/dt
 *     friction d_j    A: [-d_j; -(r_a x d_j)]    B: [d_j; r_b x d_j]   (relative slip along d_j)
 * The directions d_j = cos(2 pi j/k) t1 + sin(2 pi j/k) t2 (j = 0..k-1) are evenly spaced in
 * the tangent plane; t1 is the projection of the world axis least aligned with n, t2 = n x t1.
 * For even k every d_j has its opposite d_{j+k/2} (ST96 Eq 13); odd k still spans the plane
 * positively (so D^T v >= 0 forces v = 0) but the pyramid is not symmetric.
 *
 * The LCP (unknowns x = [p_n (nc); beta (nc k, contact-major); sigma (nc)], W = M^-1):
 *   [ G_n^T W G_n   G_n^T W G_f   0 ]       [ G_n^T nu* + psi/h ]   rho_n ⊥ p_n
 *   [ G_f^T W G_n   G_f^T W G_f   E ] x  +  [ G_f^T nu*         ] = rho_f ⊥ beta      (ST96 29)
 *   [ U            -E^T           0 ]       [ 0                 ]   rho_s ⊥ sigma
 * E = blockdiag(1_k), U = diag(mu). Then nu^{l+1} = nu* + W (G_n p_n + G_f beta).
 * rho_n = G_n^T nu^{l+1} + psi/h >= 0 is the linearised non-penetration at the end of the
 * step (PEG Eq 7); sigma approximates the sliding speed; sum_j beta_j <= mu p_n per contact.
 * A frictionless contact (mu = 0) has no beta and sigma unknowns (its sigma row would force
 * beta = 0), so the LCP has nc + n_f (k + 1) unknowns, n_f the contacts with mu > 0.
 *
 * Surface extensions (pp_contact.surface, features.h), for k > 2:
 *  - PP_CONTACT_ANISOTROPIC: mu along t1 (c->t1 projected on the tangent plane), mu2 along
 *    t2 = n x t1. The friction set is the polygon inscribed in the ellipse of semi-axes
 *    mu p_n, mu2 p_n: d_j above is replaced by D_j = mu cos(2 pi j/k) t1 + mu2 sin(2 pi j/k) t2
 *    and U by 1 (the cone row p_n - E^T beta >= 0, ST96 Eq 27 with the coefficient moved into
 *    the directions); beta and sigma are then in those scaled units (friction_vector is
 *    still the impulse, N s). k = 4: +-mu t1, +-mu2 t2, ODE's per-direction limits along
 *    each axis (an oblique slide: the rhombus inside ODE's rectangle).
 *  - PP_CONTACT_MOTION: the rows see the velocity of B relative to A minus c->motion: the
 *    q entries get -n . motion (normal) and -D_j . motion (friction), so the contact is
 *    at rest, sticking, when B moves at `motion` relative to A (a conveyor belt).
 *  - PP_CONTACT_SOFT (ODE's soft_cfm, soft_erp; impulse p_n = h lambda_n): the normal row
 *    becomes  G_n^T nu + (cfm/h) p_n + e(psi)/h >= 0 ⊥ p_n, e(psi) = erp psi for an overlap
 *    (psi < 0), psi for a gap: ODE's row J v = erp depth/h - cfm lambda with lo = 0. At rest
 *    under a load lambda_n the contact keeps the overlap cfm lambda_n h / erp. (PEG's slack
 *    rows compare e(psi_iota) - e(psi_s).)
 *  - PP_CONTACT_SLIP (ODE's slip1, slip2 along t1, t2): the friction rows see
 *    v_t + S f/h, S = slip1 t1 t1^T + slip2 t2 t2^T, f = D beta the friction impulse: the
 *    block (1/h) D^T S D is added to G_f^T W G_f. A contact sticking in this sense slides at
 *    v_t = -S f/h, ODE's force-dependent slip (J v = -slip lambda).
 *  - PP_CONTACT_ROLLING (ODE's rho, rho2, rhoN with dContactRolling): rolling friction about
 *    the tangents t1, t2 (as for ANISOTROPIC) and spinning friction about n. For each axis a
 *    with rho_a > 0, an angular column G_a = (A: [0; -a], B: [0; a]), so G_a^T nu is the
 *    rotation rate of B relative to A about a, and a planar Stewart–Trinkle pyramid in the
 *    torque impulse (two directions +-a, ST96 Eqs 26–27 with k = 2):
 *        0 <=  G_a^T nu + s_a       ⊥ g_a+ >= 0
 *        0 <= -G_a^T nu + s_a       ⊥ g_a- >= 0
 *        0 <= rho_a p_n - g_a+ - g_a- ⊥ s_a >= 0
 *    and nu = ... + W G_a (g_a+ - g_a-). So |torque impulse about a| <= rho_a p_n, the torque
 *    opposes the relative rotation about a while it rotates (at the bound) and holds it at
 *    rest within the bound: ODE's box bound (contact.cpp: lo = -rho, hi = rho times the
 *    normal force, each axis on its own). The work of the torque, -(g_a+ + g_a-) s_a <= 0 at
 *    the solution, never adds energy. These 3 unknowns per axis follow sigma in the layout:
 *    x = [p_n; beta; sigma; (g+, g-, s) per axis of each rolling contact].
 *
 * One pipeline: this is the PEG LCP (pegplus/peg.h) with one U set per contact, and
 * pp_mlcp_solve is pp_peg_solve on those sets (the stepper calls pp_peg_solve for both
 * models).
 */
#ifndef PEGPLUS_MLCP_H
#define PEGPLUS_MLCP_H

#include "pegplus/base.h"
#include "pegplus/features.h"
#include "pegplus/lcp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Default number of friction directions (ST96 §4 used 8: an octagonal pyramid). k = 2 is the
 * planar cone of a 2D world in ODE's Plane2D plane (z = const): the two directions +-t with
 * t = e_z x n / |e_z x n| (pp_mlcp_friction_directions), exact Coulomb friction in the plane. */
#define PP_MLCP_DIRECTIONS_DEFAULT 8
#define PP_MLCP_DIRECTIONS_MIN 2
#define PP_MLCP_DIRECTIONS_MAX 64

typedef struct pp_mlcp_body {
    double inv_mass;            /* 1/m, 1/kg, >= 0 */
    double inv_inertia[9];      /* world-frame J^-1, row-major 3x3, symmetric PSD, 1/(kg m^2) */
    double x[3];                /* centre of mass, m */
    double v[3];                /* free linear velocity v*, m/s */
    double w[3];                /* free angular velocity w*, rad/s (world frame) */
} pp_mlcp_body;

typedef struct pp_mlcp_problem {
    double h;                       /* step, s, > 0 */
    int body_count;
    const pp_mlcp_body *bodies;
    int contact_count;
    const pp_contact *contacts;     /* body_a, body_b in -1..body_count-1, not the same body */
    int friction_directions;        /* k in 2..64 (2: planar, see above); 0 = default */
    double compliance;              /* r >= 0 (relative): r * max_i M_ii is added to the diagonal
                                       of the normal and friction blocks (a constraint-force
                                       mixing term like ODE's CFM). Redundant contacts (a face
                                       on a face: 4 corners for 3 freedoms) make the LCP
                                       degenerate; r ~ 1e-10 makes its solution unique at a
                                       velocity error of r |M| p. 0 = exact (ST96). */
    int keep_lemke_vertex;          /* 1: where the LCP has many solutions (redundant
                                       supports) keep the vertex Lemke found instead of the
                                       compliance limit (pp_peg_solve, lcp_load_sharing.c);
                                       0 (default): share the load */
    double max_correcting_velocity; /* m/s: a penetrating contact (psi < 0) asks for the gap
                                       rate max(psi, -v_max h)/h instead of psi/h, so a deep
                                       overlap is recovered at v_max over several steps (ODE's
                                       contact max correcting velocity); <= 0 or INFINITY: no
                                       bound, the exact ST96 term */
} pp_mlcp_problem;

/* Output arrays, all the caller's. Required: normal_impulse, velocity. Optional (NULL):
 * friction_impulse, sigma, friction_vector. */
typedef struct pp_mlcp_solution {
    double *normal_impulse;     /* nc: p_n >= 0, N s, acting on B along n (on A along -n) */
    double *friction_impulse;   /* nc k: beta >= 0, contact-major, along d_j on B */
    double *sigma;              /* nc: the sliding-speed multiplier, m/s */
    double *friction_vector;    /* 3 nc: sum_j beta_j d_j, the friction impulse on B (N s) */
    double *velocity;           /* 6 nb: nu^{l+1} per body as (v, w) */
    double *joint_impulse;      /* optional, pp_peg_solve with joint rows: p = h lambda of
                                   each row (N s or N m s) */
} pp_mlcp_solution;

typedef struct pp_mlcp_stats {
    int lcp_size;               /* nc + n_f (k + 1): unknowns of the whole LCP */
    int directions;             /* k used */
    int islands;                /* independent blocks solved (see pp_mlcp_solve) */
    int largest_island;         /* unknowns of the largest block */
    int islands_failed;         /* blocks the LCP solver failed on */
    int failed_island;          /* the first of them, -1 if none; islands are numbered in
                                   the order of their smallest contact index */
    pp_lcp_result lcp;          /* the LCP solves over all islands: status (SOLVED, or the
                                   first failure), pivots, refactorisations and attempts
                                   summed, epsilon, residuals, scale and complementarity the
                                   largest, min_z and min_w the smallest; warm_started when
                                   no island pivoted and one was accepted from the basis */
    int load_shared;            /* islands whose redundant supports got the compliance limit
                                   instead of Lemke's vertex (pp_peg_solve, pegplus/peg.h) */
} pp_mlcp_stats;

typedef struct pp_mlcp_workspace pp_mlcp_workspace;

/* Unknowns of the LCP for nc contacts and k directions, all frictional and rolling:
 * nc (k + 2 + PP_CONTACT_ROLLING_UNKNOWNS_MAX) (an upper bound: a frictionless contact needs
 * k + 1 fewer, a contact without ROLLING 9 fewer). */
int pp_mlcp_lcp_size(int contact_count, int directions);

/* Workspace for up to max_bodies bodies, max_contacts contacts and max_directions
 * directions (0 = default). Returns PP_ERR_INVALID_ARGUMENT / PP_ERR_NO_MEMORY. */
pp_status pp_mlcp_workspace_create(int max_bodies, int max_contacts, int max_directions,
                                   pp_mlcp_workspace **out);
void pp_mlcp_workspace_destroy(pp_mlcp_workspace *workspace);

/*
 * Build and solve one Stewart–Trinkle step.
 *  - Islands: contacts that share a body with W_b != 0 (not static, not kinematic) are
 *    coupled; the LCP is block diagonal over the connected components ("islands") of that
 *    relation, and each block is assembled and solved on its own (pp_lcp_solve). The
 *    solution is the same as that of the whole LCP; the work is O(sum of block sizes^2)
 *    per pivot instead of O(n^2), and a solver failure stays in its island.
 *  - options: LCP options (NULL = pp_lcp_options_default()); the regularisation fallback of
 *    pp_lcp_solve applies, island by island. Its arrays indexed by an LCP (covering,
 *    fallback_start, contact_block, set_slack) must be NULL (pp_peg_solve; else
 *    PP_ERR_INVALID_ARGUMENT).
 *  - basis: optional, pp_mlcp_lcp_size(nc, k) bytes indexed like the whole LCP, the
 *    warm-start basis of the previous step on entry (when options->warm_start) and the
 *    final basis on exit (pp_lcp_solve; all zeros in a failed island; bit 1 of a byte is load
 *    sharing's, pegplus/peg.h). The caller keeps the contact order stable for it to be useful.
 * Returns PP_OK; PP_ERR_SOLVER when an island was not solved (its impulses 0, its bodies
 * keep nu*; the other islands are solved; stats->lcp and stats->islands_failed say why and
 * how many); or an argument error (nothing written). Never writes NaN.
 */
pp_status pp_mlcp_solve(pp_mlcp_workspace *workspace, const pp_mlcp_problem *problem,
                        const pp_lcp_options *options, unsigned char *basis,
                        pp_mlcp_solution *solution, pp_mlcp_stats *stats);

/* The whole LCP of the last pp_mlcp_solve (column-major M, q, n = stats.lcp_size; valid
 * until the next call, solve or destroy), e.g. for pp_lcp_instance_save of a failing step.
 * M is assembled by this call, O(n^2), into the workspace's scratch. */
void pp_mlcp_last_lcp(const pp_mlcp_workspace *workspace, int *n, const double **M,
                      const double **q);

/* The k friction directions of unit normal n (3 doubles each, into d[3k]). */
void pp_mlcp_friction_directions(const double n[3], int k, double *d);

/* The world axis (0 x, 1 y, 2 z) least aligned with unit normal n, whose projection on the
 * tangent plane is pp_mlcp_friction_directions' t1 (ties to the lower index). */
int pp_mlcp_friction_axis(const double n[3]);

/*
 * The k friction directions of unit normal n with t1 the projection of world axis `axis`
 * (0..2) on the tangent plane, while that projection keeps the squared length the rule's
 * always has (1 - n_axis^2 >= 2/3, |n_axis| <= 1/sqrt 3) down to PP_MLCP_AXIS_KEPT; beyond
 * it, and for axis < 0, pp_mlcp_friction_directions' own axis. With the rule's own axis the
 * directions are pp_mlcp_friction_directions' bit for bit.
 *
 * Why a contact keeps an axis. The rule's axis is a discontinuous function of n: where two
 * components of n tie in magnitude (|n_y| = |n_z| < |n_x|, say), t1 turns by a finite angle
 * as n crosses the tie, and with it the pyramid (by 35-90 degrees for n near (0.71, 0.50,
 * 0.50)). The LCP's answer at a sliding contact is a vertex or facet of its pyramid, so the
 * answer jumps with the pyramid. Within a step, the re-linearisation's fixed point nu = F(nu^)
 * (ST96 §3.6) needs F continuous: its iterates' contacts are built at predicted poses whose
 * normals differ by the iterates' differences, and a normal on the tie made F jump between
 * two answers at every iterate (relinearize.c, "A contact's friction pyramid through the
 * step"). The axis kept from the step's start makes the pyramid a continuous function of n
 * while |n_axis| stays below sqrt(1 - PP_MLCP_AXIS_KEPT).
 */
#define PP_MLCP_AXIS_KEPT (1.0 / 3.0)
void pp_mlcp_friction_directions_about(const double n[3], int axis, int k, double *d);

/*
 * Jacobian blocks of contact c for direction u (u = n: the normal column; u = d_j: a friction
 * column): g_a = [-u; -(r_a x u)] for body A at centre x_a, g_b = [u; r_b x u] for body B at
 * x_b, r_a = p_a - x_a, r_b = p_a + psi n - x_b. Either x may be NULL (static side: block 0).
 */
void pp_mlcp_contact_jacobian(const pp_contact *c, const double x_a[3], const double x_b[3],
                              const double u[3], double g_a[6], double g_b[6]);

#ifdef __cplusplus
}
#endif
#endif /* PEGPLUS_MLCP_H */
