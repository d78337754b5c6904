/* The sticking solve of a large contact island (lcp_sticking.c has the derivation). */
#ifndef PP_LCP_STICKING_H
#define PP_LCP_STICKING_H

#include "lcp_interior.h"
#include "lcp_internal.h"

/* Scratch and the active set of one solve; grown to the largest island, kept. */
typedef struct pp_sticking {
    int capacity;                 /* n the arrays hold */
    unsigned char *basis;         /* n: x_i basic (w_i = 0) in the active set found */
    double *x, *x_eps, *w, *rhs, *size; /* n */
    int *index, *place;           /* n: basic unknowns in order; an unknown's place in B */
    int *row_start, *row_col;     /* n + 1, nnz: the sliding-speed rows of A over F */
    double *row_val;
    size_t row_capacity;
    int *Ap, *Ai;                 /* n + 1, a_capacity: the basis block by columns */
    double *Ax;
    size_t a_capacity;
    struct pp_lcp_lu *lu;
    int *Qp, *Qi;                 /* n + 1, q_capacity: Q + eps D by columns, for Lemke */
    double *Qx;
    size_t q_capacity;
    unsigned char *start;         /* n: Lemke's basis on Q */
    unsigned char *slides;        /* n: on a sliding speed, its contact is in ST's form */
    unsigned char *sliding, *kept_slides; /* n: the caller's (peg_mlcp.c) */
    double *z_interior;           /* n: the interior-point answer, while the steps polish it */
    unsigned char *slides_interior; /* n: the slides of that answer */
    pp_interior interior;         /* the interior-point solve of Q (lcp_interior.c) */
    int lemke_only;               /* the caller's: 1 skips the interior-point stage */
    int rounds;                   /* solves of Q in pp_sticking_island (interior, Lemke) */
    /* what the last solve did (measurements, the caller's statistics) */
    int steps;                    /* active-set steps (one factorisation each) */
    int flips;                    /* unknowns that changed side, over all steps */
    int first_flips;              /* of them, in the first step */
    int limit_iterations;         /* iterated-Tikhonov solves of the last step */
    int sliding_loaded;           /* contacts with lambda > 0 and p > 0 (no ST answer) */
    double lambda_max;            /* largest lambda of a loaded contact, over ||z||_inf */
    int lemke_pivots;             /* Lemke's on Q in pp_sticking_island */
    int interior_iterations;      /* the interior-point solve's on Q, over its rounds */
    int cold_again;               /* rounds whose warm start stalled, solved again cold */
    int polished;                 /* 1: its answer replaced by its active set's limit */
    int from_kept;                /* pp_sticking_island answered from the kept active set */
    /* The last accepted answers of the two last island sizes (a step's first solve and its
     * re-linearisation iterates solve islands of different sets): the interior-point
     * solve's start on the next island of that size and pattern (interior.start) */
    double *z_start[2];
    int start_n[2], start_nnz[2];  /* their n (0: none) and A's entries */
    int start_next;                /* the slot a new size takes */
    /* The last solve's answer, z_start[answer_slot] (-1: that solve was not answered), tried
     * as it stands on the island's next solve where that is the same LCP (a step's next
     * re-linearisation iterate) */
    int answer_slot;
    /* The caller's start for the next solve (n: this island's unknowns, e.g. its sets' answers
     * of the last step, kept with the island by constraint identity; 0 where not known): the
     * interior-point solve's start where no answer of this size and pattern is kept (z_start)
     * since the last pp_sticking_forget. given: z_given holds it (cleared by that solve). */
    double *z_given;
    int given;
    double *q_answer;             /* n: its q */
    double *d_answer;             /* n: its A's diagonal */
    /* A refused solve's best round (pp_sticking_island not SOLVED): of the answers its rounds
     * formed and did not take (the interior rounds' iterates, the steps' limits), the least
     * r(z) on ST's A, q among those with r(z) <= ||q||_inf (on a tie the least rel(z): the
     * bounded fallback's order, pp_lcp_fallback_better), for the bounded fallback's start
     * (pp_lcp_options.fallback_start; peg_mlcp.c). best_residual, best_rel: its r(z) and
     * rel(z), INFINITY where none (z_best then unset) */
    double *z_best;
    double best_residual, best_rel;
    int from_answer;              /* pp_sticking_island answered with it: no factorisation */
    long answer_tried, answer_taken; /* over every solve since the workspace was made: its
                                        acceptance ran, and took it */
} pp_sticking;

typedef enum pp_sticking_outcome {
    PP_STICKING_SOLVED = 0,    /* z is the answer, accepted on LCP(A, q) */
    PP_STICKING_SLIDES = 1,    /* the convex problem's answer has a loaded contact sliding */
    PP_STICKING_FAILED = 2,    /* no active set found (steps, singular block), or refused */
    PP_STICKING_LEMKE_WARM = 3 /* not run: Lemke's warm basis solves LCP(A, q) as it stands */
} pp_sticking_outcome;

pp_status pp_sticking_reserve(pp_sticking *st, int n);
void pp_sticking_free(pp_sticking *st);
/* Drops the last answers kept (z_start): the next solve starts cold. */
void pp_sticking_forget(pp_sticking *st);

/* The entry before Lemke (peg_mlcp.c), for LCP(A, q) of a Stewart-Trinkle island by columns
 * whose unknowns with sliding[i] = 1 are the sliding speeds (rows mu p - sum beta, zero
 * diagonal) and all others impulses (A symmetric on them). With a kept active set: the last
 * answer accepted as it stands where this is the same LCP (the size, A's pattern and q to
 * STICK_ANSWER_SAME; no factorisation), else the kept active set tried as it stands (one
 * factorisation); then, unless Lemke's warm basis lemke_warm (optional) solves LCP(A, q) as
 * it stands (PP_STICKING_LEMKE_WARM: Lemke answers with it), the interior-point solve of the
 * monotone LCP (2) (its answer accepted on LCP(A, q) as it is; its first round started from
 * the last answer of an island of this n and nnz(A), z_start, where there is one, else from
 * the caller's z_given where given), else Lemke on (2) by columns (from the kept set, else
 * cold; at most STICK_LEMKE_PIVOTS n pivots) and the steps from its basis. lcp: a Lemke
 * workspace of capacity >= n. result->pivots counts Lemke's pivots on Q (also when the
 * answer is refused). Not SOLVED: st->z_best holds the best round's answer where
 * st->best_rel < INFINITY. */
pp_sticking_outcome pp_sticking_island(pp_sticking *st, pp_lcp_workspace *lcp,
                                       const pp_lcp_csc *A, const double *q,
                                       const unsigned char *sliding, const unsigned char *kept,
                                       const unsigned char *kept_slides,
                                       const unsigned char *lemke_warm,
                                       const pp_lcp_options *o, double *z,
                                       pp_lcp_result *result);

#endif
