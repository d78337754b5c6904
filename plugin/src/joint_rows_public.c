/*
 * An ODE joint's constraint rows rebuilt from ODE's public C API plus a capture of what that
 * API does not expose (joint_rows_public.h, docs/joints-public-rows.md).
 *
 * Each builder below writes the rows of ODE 0.16.2's getInfo2 for its type, in its order,
 * from public getters (anchors, axes, angles, positions, parameters, body poses and
 * velocities) and the capture. Arithmetic follows ODE's where the result depends on it (same
 * products in the same order through ODE's public odemath.h helpers, dPlaneSpace, dQMultiply*,
 * dNormalize3), so the rows agree with getInfo2's to round-off; what differs is only where a
 * hidden body-frame vector is reached through a public world-frame one (a1 = A1 - p1 instead
 * of R1 anchor1), an error of an ulp of the world coordinates.
 *
 * ODE's internal order: b1 = node[0] is never NULL; an attach (0, b) stores (b, 0) and sets
 * dJOINT_REVERSE, which the public getters undo (anchors swapped, angles negated, ...). The
 * public API has no "reversed" query, but a joint with one body is reversed exactly when
 * dJointGetBody(j, 0) is NULL (dJointAttach clears the flag otherwise).
 *
 * Limits (getInfo1): every type decides `limit` from the joint angle or position as
 * testRotationalLimit does (at lo if theta <= lostop, at hi if theta >= histop), behind the
 * type's own gate (stops inside [-pi, pi] for hinge-like angles, finite for positions, none
 * for AMotor, never for LMotor and hinge2's axis 2). The public angle getters compute exactly
 * what getInfo1 computes, except AMotor in Euler mode, whose public angle is the one cached by
 * the last getInfo1: it is recomputed here from the public Euler axes and the captured
 * reference vectors.
 */
#include "joint_rows_public.h"

#include <math.h>
#include <string.h>

_Static_assert(sizeof(dReal) == sizeof(double), "pegplus needs ODE built in double precision");

/* ---- the joint's bodies in ODE's internal order ----------------------------------------- */

typedef struct joint_frame {
    dJointID joint;
    dBodyID b1, b2;          /* internal order; b2 NULL: the static world */
    int reversed;            /* attached as (0, b) */
    const dReal *p1, *R1, *q1, *v1, *w1;
    const dReal *p2, *R2, *q2, *v2, *w2;
} joint_frame;

static int frame_of(dJointID joint, joint_frame *f)
{
    dBodyID d0 = dJointGetBody(joint, 0), d1 = dJointGetBody(joint, 1);
    memset(f, 0, sizeof *f);
    f->joint = joint;
    f->b1 = d0 ? d0 : d1;
    f->b2 = d0 ? d1 : NULL;
    f->reversed = d0 == NULL && d1 != NULL;
    if (!f->b1) return 0;
    f->p1 = dBodyGetPosition(f->b1);
    f->R1 = dBodyGetRotation(f->b1);
    f->q1 = dBodyGetQuaternion(f->b1);
    f->v1 = dBodyGetLinearVel(f->b1);
    f->w1 = dBodyGetAngularVel(f->b1);
    if (f->b2) {
        f->p2 = dBodyGetPosition(f->b2);
        f->R2 = dBodyGetRotation(f->b2);
        f->q2 = dBodyGetQuaternion(f->b2);
        f->v2 = dBodyGetLinearVel(f->b2);
        f->w2 = dBodyGetAngularVel(f->b2);
    }
    return 1;
}

/* A public anchor pair in internal order: getter 1 gives b1's anchor unless reversed. */
typedef void anchor_getter(dJointID, dVector3);

static void internal_anchors(const joint_frame *f, anchor_getter *get1, anchor_getter *get2,
                             double A1[3], double A2[3])
{
    dVector3 a, b;
    get1(f->joint, a);
    get2(f->joint, b);
    dCopyVector3(A1, f->reversed ? b : a);
    dCopyVector3(A2, f->reversed ? a : b);
}

/* R v (body to world) and R^T v (world to body), R as ODE stores it (3 x 4). */
static void to_world(double out[3], const dReal *R, const double v[3])
{
    dMultiply0_331(out, R, v);
}

static void to_body(double out[3], const dReal *R, const double v[3])
{
    dMultiply1_331(out, R, v);
}

/* ---- rows ---------------------------------------------------------------------------------- */

typedef struct row_builder {
    pp_joint_row *rows;
    int m;
    double fps, erp, cfm;    /* fps = 1/h, the world's ERP and CFM */
    joint_frame f;
    pp_joint_wrench *motor;
} row_builder;

/* The next row, preset as dWorldStep presets it: J = 0, c = 0, cfm = world CFM, unbounded. */
static pp_joint_row *next_row(row_builder *bd)
{
    pp_joint_row *r = &bd->rows[bd->m++];
    memset(r->J, 0, sizeof r->J);
    r->c = 0.0;
    r->cfm = bd->cfm;
    r->lo = -dInfinity;
    r->hi = dInfinity;
    return r;
}

#define J1L(r) ((r)->J)
#define J1A(r) ((r)->J + 3)
#define J2L(r) ((r)->J + 6)
#define J2A(r) ((r)->J + 9)

/* BALL (docs/joints-public-rows.md): three rows along the world axes holding A1 = A2, rate
 * k = fps erp. */
static void ball_rows(row_builder *bd, double erp, const double A1[3], const double A2[3])
{
    const joint_frame *f = &bd->f;
    dVector3 a1, a2 = {0.0, 0.0, 0.0};
    dSubtractVectors3(a1, A1, f->p1);
    if (f->b2) dSubtractVectors3(a2, A2, f->p2);
    pp_joint_row *r[3];
    for (int i = 0; i < 3; ++i) r[i] = next_row(bd);
    /* J1a row i = a1 x e_i, J2a row i = e_i x a2 (ODE's cross matrices, written out) */
    J1L(r[0])[0] = 1.0;
    J1L(r[1])[1] = 1.0;
    J1L(r[2])[2] = 1.0;
    J1A(r[0])[1] = a1[2];
    J1A(r[0])[2] = -a1[1];
    J1A(r[1])[0] = -a1[2];
    J1A(r[1])[2] = a1[0];
    J1A(r[2])[0] = a1[1];
    J1A(r[2])[1] = -a1[0];
    if (f->b2) {
        J2L(r[0])[0] = -1.0;
        J2L(r[1])[1] = -1.0;
        J2L(r[2])[2] = -1.0;
        J2A(r[0])[1] = -a2[2];
        J2A(r[0])[2] = a2[1];
        J2A(r[1])[0] = a2[2];
        J2A(r[1])[2] = -a2[0];
        J2A(r[2])[0] = -a2[1];
        J2A(r[2])[1] = a2[0];
    }
    const double k = bd->fps * erp;
    for (int i = 0; i < 3; ++i)
        r[i]->c = f->b2 ? k * (a2[i] + f->p2[i] - a1[i] - f->p1[i])
                        : k * (A2[i] - a1[i] - f->p1[i]);
}

/* ORIENT (docs/joints-public-rows.md): three angular rows holding the relative rotation at qrel;
 * the error quaternion qerr = (q1^-1 q2) qrel^-1 (no b2: q1^-1 qrel^-1), taken with qerr.w >= 0,
 * gives the rate 2 k R1 qerr.xyz (small-angle: the rotation angle is 2 |qerr.xyz|). */
static void orientation_rows(row_builder *bd, const double qrel[4])
{
    const joint_frame *f = &bd->f;
    pp_joint_row *r[3];
    for (int i = 0; i < 3; ++i) {
        r[i] = next_row(bd);
        J1A(r[i])[i] = 1.0;
        if (f->b2) J2A(r[i])[i] = -1.0;
    }
    dQuaternion qerr;
    if (f->b2) {
        dQuaternion qq;
        dQMultiply1(qq, f->q1, f->q2);
        dQMultiply2(qerr, qq, qrel);
    } else {
        dQMultiply3(qerr, f->q1, qrel);
    }
    if (qerr[0] < 0.0) {
        qerr[1] = -qerr[1];
        qerr[2] = -qerr[2];
        qerr[3] = -qerr[3];
    }
    dVector3 e;
    to_world(e, f->R1, qerr + 1);
    const double k2 = bd->fps * bd->erp * 2.0;
    for (int i = 0; i < 3; ++i) r[i]->c = k2 * e[i];
}

/* ---- LIMOT: the limit / motor row (docs/joints-public-rows.md) ---------------------------- */

typedef struct limot {
    double lostop, histop, vel, fmax, fudge, normal_cfm, stop_erp, stop_cfm, bounce;
    int limit;               /* 0 free, 1 at lo, 2 at hi (getInfo1's decision) */
    double err;              /* theta - stop when at a limit */
} limot;

typedef dReal param_getter(dJointID, int);

/* The motor parameters of one axis: `group` is the parameter offset of that axis
 * (0, dParamGroup2 - dParamGroup1, ...). */
static void limot_read(limot *l, param_getter *get, dJointID j, int group)
{
    l->lostop = get(j, group + dParamLoStop);
    l->histop = get(j, group + dParamHiStop);
    l->vel = get(j, group + dParamVel);
    l->fmax = get(j, group + dParamFMax);
    l->fudge = get(j, group + dParamFudgeFactor);
    l->bounce = get(j, group + dParamBounce);
    l->normal_cfm = get(j, group + dParamCFM);
    l->stop_erp = get(j, group + dParamStopERP);
    l->stop_cfm = get(j, group + dParamStopCFM);
    l->limit = 0;
    l->err = 0.0;
}

/* testRotationalLimit, used for angles and positions alike. */
static void limot_test(limot *l, double theta)
{
    if (theta <= l->lostop) {
        l->limit = 1;
        l->err = theta - l->lostop;
    } else if (theta >= l->histop) {
        l->limit = 2;
        l->err = theta - l->histop;
    } else {
        l->limit = 0;
    }
}

/* The gates behind which each type tests its stops. */
static int angle_gate(const limot *l)
{
    return (l->lostop >= -M_PI || l->histop <= M_PI) && l->lostop <= l->histop;
}

static int position_gate(const limot *l)
{
    return (l->lostop > -dInfinity || l->histop < dInfinity) && l->lostop <= l->histop;
}

typedef enum limot_kind {
    LIMOT_ANGULAR,   /* J1 = (0, u), J2 = (0, -u) */
    LIMOT_LINEAR,    /* J1 = (u, t), J2 = (-u, t), t = (p2 - p1)/2 x u: no torque couple */
    LIMOT_TWO_POINT  /* J1 = (u, pt1 x u), J2 = (-u, pt2 x -u): forces at the anchors */
} limot_kind;

static void add_to(double out[3], const double v[3], double s)
{
    for (int i = 0; i < 3; ++i) out[i] += s * v[i];
}

/* The row of one limit/motor about or along u, if the axis is powered or at a limit:
 *  - motor, no limit: c = vel, cfm = the axis' CFM, -fmax <= f <= fmax;
 *  - at a limit: c = -fps stop_erp err, cfm = StopCFM, f >= 0 at lo, f <= 0 at hi, and with
 *    bounce the incoming joint speed s turns into c >= -bounce s (at lo; mirrored at hi);
 *    lostop == histop makes it an equality and ignores the motor;
 *  - powered at a limit: the limit row, and the motor as an external force of fmax
 *    (times FudgeFactor if it pulls away from the stop) -fm u on b1, +fm u on b2, collected
 *    in bd->motor (for a linear row also -fm t on both; two-point: the torques of the row).
 * Returns 1 if a row was added. */
static int limot_row(row_builder *bd, const limot *l, const double u[3], limot_kind kind,
                     const double pt1[3], const double pt2[3])
{
    const joint_frame *f = &bd->f;
    int powered = l->fmax > 0.0;
    if (!powered && !l->limit) return 0;
    pp_joint_row *r = next_row(bd);
    dVector3 ltd = {0.0, 0.0, 0.0};
    switch (kind) {
    case LIMOT_ANGULAR:
        dCopyVector3(J1A(r), u);
        if (f->b2) dCopyNegatedVector3(J2A(r), u);
        break;
    case LIMOT_LINEAR:
        dCopyVector3(J1L(r), u);
        if (f->b2) {
            dCopyNegatedVector3(J2L(r), u);
            dVector3 half;
            for (int i = 0; i < 3; ++i) half[i] = 0.5 * (f->p2[i] - f->p1[i]);
            dCalcVectorCross3(ltd, half, u);
            dCopyVector3(J1A(r), ltd);
            dCopyVector3(J2A(r), ltd);
        }
        break;
    case LIMOT_TWO_POINT:
        dCopyVector3(J1L(r), u);
        dCalcVectorCross3(J1A(r), pt1, u);
        if (f->b2) {
            dCopyNegatedVector3(J2L(r), u);
            dCalcVectorCross3(J2A(r), pt2, J2L(r));
        }
        break;
    }
    if (l->limit && l->lostop == l->histop) powered = 0;
    if (powered) {
        r->cfm = l->normal_cfm;
        if (!l->limit) {
            r->c = l->vel;
            r->lo = -l->fmax;
            r->hi = l->fmax;
        } else {
            double fm = l->fmax;
            if (l->vel > 0.0 || (l->vel == 0.0 && l->limit == 2)) fm = -fm;
            if ((l->limit == 1 && l->vel > 0.0) || (l->limit == 2 && l->vel < 0.0))
                fm *= l->fudge;
            /* -fm u on b1, +fm u on b2: torques for an angular row; forces for a linear
             * one, with the torques of the row's own angular part (its decoupling torque,
             * or the anchors' lever arms for the two-point row) */
            pp_joint_wrench *w = bd->motor;
            w->active = 1;
            if (kind == LIMOT_ANGULAR) {
                add_to(w->torque[0], u, -fm);
                if (f->b2) add_to(w->torque[1], u, fm);
            } else {
                add_to(w->force[0], u, -fm);
                add_to(w->torque[0], J1A(r), -fm);
                if (f->b2) {
                    add_to(w->force[1], u, fm);
                    add_to(w->torque[1], J2A(r), -fm);
                }
            }
        }
    }
    if (l->limit) {
        r->c = -(bd->fps * l->stop_erp) * l->err;
        r->cfm = l->stop_cfm;
        if (l->lostop == l->histop) {
            r->lo = -dInfinity;
            r->hi = dInfinity;
        } else {
            r->lo = l->limit == 1 ? 0.0 : -dInfinity;
            r->hi = l->limit == 1 ? dInfinity : 0.0;
            if (l->bounce > 0.0) {
                /* the joint's current speed along the row: angular and linear rows use only
                 * the (angular or linear) velocity along u, the two-point row all of J */
                double s;
                if (kind == LIMOT_ANGULAR) {
                    s = dCalcVectorDot3(f->w1, u);
                    if (f->b2) s -= dCalcVectorDot3(f->w2, u);
                } else if (kind == LIMOT_LINEAR) {
                    s = dCalcVectorDot3(f->v1, u);
                    if (f->b2) s -= dCalcVectorDot3(f->v2, u);
                } else {
                    s = dCalcVectorDot3(f->v1, J1L(r)) + dCalcVectorDot3(f->w1, J1A(r));
                    if (f->b2) s += dCalcVectorDot3(f->v2, J2L(r)) + dCalcVectorDot3(f->w2, J2A(r));
                }
                const double bounced = -l->bounce * s;
                if (l->limit == 1 && s < 0.0 && bounced > r->c) r->c = bounced;
                if (l->limit == 2 && s > 0.0 && bounced < r->c) r->c = bounced;
            }
        }
    }
    return 1;
}

/* ---- the joint types --------------------------------------------------------------------- */

/* Ball: BALL with the joint's own ERP and CFM. */
static int ball(row_builder *bd)
{
    dJointID j = bd->f.joint;
    dVector3 A1, A2;
    internal_anchors(&bd->f, dJointGetBallAnchor, dJointGetBallAnchor2, A1, A2);
    ball_rows(bd, dJointGetBallParam(j, dParamERP), A1, A2);
    const double cfm = dJointGetBallParam(j, dParamCFM);
    for (int i = 0; i < 3; ++i) bd->rows[i].cfm = cfm;
    return 1;
}

/* Two angular rows (0, p), (0, q) holding ax2 on ax1, (p, q) = P(ax1), rate k (ax1 x ax2)
 * along p and q (hinge, piston and PR use this; PR with its own p). */
static void axis_alignment_rows(row_builder *bd, const double p[3], const double q[3],
                                const double ax1[3], const double ax2[3])
{
    pp_joint_row *rp = next_row(bd), *rq = next_row(bd);
    dCopyVector3(J1A(rp), p);
    dCopyVector3(J1A(rq), q);
    if (bd->f.b2) {
        dCopyNegatedVector3(J2A(rp), p);
        dCopyNegatedVector3(J2A(rq), q);
    }
    dVector3 b;
    dCalcVectorCross3(b, ax1, ax2);
    const double k = bd->fps * bd->erp;
    rp->c = k * dCalcVectorDot3(b, p);
    rq->c = k * dCalcVectorDot3(b, q);
}

/* Axis 2 in world frame from its captured body-2 frame vector. */
static void captured_axis2(const row_builder *bd, const pp_joint_capture *cap, double ax2[3])
{
    if (bd->f.b2) to_world(ax2, bd->f.R2, cap->axis2);
    else dCopyVector3(ax2, cap->axis2);
}

/* Hinge: BALL (world ERP), two rows keeping ax2 on ax1, LIMOT(ax1) on the hinge angle. */
static int hinge(row_builder *bd, const pp_joint_capture *cap)
{
    const joint_frame *f = &bd->f;
    dVector3 A1, A2, ax1, ax2, p, q;
    internal_anchors(f, dJointGetHingeAnchor, dJointGetHingeAnchor2, A1, A2);
    ball_rows(bd, bd->erp, A1, A2);
    dJointGetHingeAxis(f->joint, ax1);
    dPlaneSpace(ax1, p, q);
    captured_axis2(bd, cap, ax2);
    axis_alignment_rows(bd, p, q, ax1, ax2);
    limot l;
    limot_read(&l, dJointGetHingeParam, f->joint, 0);
    if (angle_gate(&l)) {
        const double angle = dJointGetHingeAngle(f->joint); /* negated when reversed */
        limot_test(&l, f->reversed ? -angle : angle);
    }
    limot_row(bd, &l, ax1, LIMOT_ANGULAR, NULL, NULL);
    return 1;
}

/* Slider: ORIENT (world ERP), two linear rows across ax1 holding b1's centre on the line
 * through b2's offset point, LIMOT(ax1, linear) on the position (ax1 negated when reversed
 * without b2). */
static int slider(row_builder *bd, const pp_joint_capture *cap)
{
    const joint_frame *f = &bd->f;
    dJointID j = f->joint;
    orientation_rows(bd, cap->qrel);
    dVector3 ax1, p, q, c = {0.0, 0.0, 0.0};
    dJointGetSliderAxis(j, ax1);
    dPlaneSpace(ax1, p, q);
    if (f->b2) dSubtractVectors3(c, f->p2, f->p1);
    pp_joint_row *rp = next_row(bd), *rq = next_row(bd);
    dCopyVector3(J1L(rp), p);
    dCopyVector3(J1L(rq), q);
    if (f->b2) {
        dVector3 t;
        dCopyNegatedVector3(J2L(rp), p);
        dCalcVectorCross3(t, c, p);
        dCopyScaledVector3(J1A(rp), t, 0.5);
        dCopyVector3(J2A(rp), J1A(rp));
        dCopyNegatedVector3(J2L(rq), q);
        dCalcVectorCross3(t, c, q);
        dCopyScaledVector3(J1A(rq), t, 0.5);
        dCopyVector3(J2A(rq), J1A(rq));
    }
    const double k = bd->fps * bd->erp;
    dVector3 e;
    if (f->b2) {
        dVector3 ofs;
        to_world(ofs, f->R2, cap->offset);
        dAddVectors3(e, c, ofs);
    } else {
        dSubtractVectors3(e, cap->offset, f->p1);
        if (f->reversed) dNegateVector3(ax1);
    }
    rp->c = k * dCalcVectorDot3(p, e);
    rq->c = k * dCalcVectorDot3(q, e);
    limot l;
    limot_read(&l, dJointGetSliderParam, j, 0);
    if (position_gate(&l)) limot_test(&l, dJointGetSliderPosition(j));
    limot_row(bd, &l, ax1, LIMOT_LINEAR, NULL, NULL);
    return 1;
}

/* Fixed: three linear rows with the joint's ERP and CFM holding p1 = p2 + o, o = R1 offset
 * (J1 = (e_i, e_i x o), J2 = (-e_i, 0); without b2 J1 = (e_i, 0) holding p1 at the captured
 * world point), then ORIENT (world ERP and CFM). */
static int fixed(row_builder *bd, const pp_joint_capture *cap)
{
    const joint_frame *f = &bd->f;
    dJointID j = f->joint;
    pp_joint_row *r[3];
    for (int i = 0; i < 3; ++i) {
        r[i] = next_row(bd);
        J1L(r[i])[i] = 1.0;
    }
    dVector3 o;
    to_world(o, f->R1, cap->offset);
    if (f->b2) {
        /* e_i x o, written out */
        J1A(r[0])[1] = -o[2];
        J1A(r[0])[2] = o[1];
        J1A(r[1])[0] = o[2];
        J1A(r[1])[2] = -o[0];
        J1A(r[2])[0] = -o[1];
        J1A(r[2])[1] = o[0];
        for (int i = 0; i < 3; ++i) J2L(r[i])[i] = -1.0;
    }
    const double k = bd->fps * dJointGetFixedParam(j, dParamERP);
    const double cfm = dJointGetFixedParam(j, dParamCFM);
    for (int i = 0; i < 3; ++i) {
        r[i]->c = f->b2 ? k * (f->p2[i] - f->p1[i] + o[i]) : k * (cap->offset[i] - f->p1[i]);
        r[i]->cfm = cfm;
    }
    orientation_rows(bd, cap->qrel);
    return 1;
}

/* Universal: BALL (world ERP); one angular row about u = ax1 x (ax2 made perpendicular to
 * ax1), rate -k ax1.ax2; LIMOT(ax1) on angle 1, LIMOT(ax2) on angle 2. */
static int universal(row_builder *bd)
{
    const joint_frame *f = &bd->f;
    dJointID j = f->joint;
    dVector3 A1, A2, ax1, ax2;
    internal_anchors(f, dJointGetUniversalAnchor, dJointGetUniversalAnchor2, A1, A2);
    ball_rows(bd, bd->erp, A1, A2);
    /* the public axes 1 and 2 swap when reversed */
    dJointGetUniversalAxis1(j, f->reversed ? ax2 : ax1);
    dJointGetUniversalAxis2(j, f->reversed ? ax1 : ax2);
    const double d = dCalcVectorDot3(ax1, ax2);
    dVector3 perp, u;
    dAddVectorScaledVector3(perp, ax2, ax1, -d);
    dCalcVectorCross3(u, ax1, perp);
    dNormalize3(u);
    pp_joint_row *r = next_row(bd);
    dCopyVector3(J1A(r), u);
    if (f->b2) dCopyNegatedVector3(J2A(r), u);
    r->c = bd->fps * bd->erp * (-d);
    limot l1, l2;
    limot_read(&l1, dJointGetUniversalParam, j, 0);
    limot_read(&l2, dJointGetUniversalParam, j, dParamGroup2 - dParamGroup1);
    const int gate1 = angle_gate(&l1), gate2 = angle_gate(&l2);
    if (gate1 || gate2) {
        /* public (angle1, angle2) = internal (a2, -a1) when reversed */
        double pa1, pa2;
        dJointGetUniversalAngles(j, &pa1, &pa2);
        if (gate1) limot_test(&l1, f->reversed ? -pa2 : pa1);
        if (gate2) limot_test(&l2, f->reversed ? pa1 : pa2);
    }
    limot_row(bd, &l1, ax1, LIMOT_ANGULAR, NULL, NULL);
    limot_row(bd, &l2, ax2, LIMOT_ANGULAR, NULL, NULL);
    return 1;
}

/* Hinge2 (two bodies always): three ball rows along (ax1, P(ax1)) — the first with the
 * suspension's ERP and CFM —, one angular row about n = unit(ax1 x ax2) holding the angle
 * between the axes at its captured value, rate k (c0 s - s0 c); LIMOT(ax1) on angle 1, a
 * motor on ax2. */
static int hinge2(row_builder *bd, const pp_joint_capture *cap)
{
    const joint_frame *f = &bd->f;
    dJointID j = f->joint;
    if (!f->b2) return 0;
    dVector3 A1, A2, ax1, ax2, n;
    internal_anchors(f, dJointGetHinge2Anchor, dJointGetHinge2Anchor2, A1, A2);
    dJointGetHinge2Axis1(j, ax1);
    dJointGetHinge2Axis2(j, ax2);
    dCalcVectorCross3(n, ax1, ax2);
    const double s = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    const double c = dCalcVectorDot3(ax1, ax2);
    dNormalize3(n);
    dVector3 dirs[3], a1, a2, d;
    dCopyVector3(dirs[0], ax1);
    dPlaneSpace(ax1, dirs[1], dirs[2]);
    dSubtractVectors3(a1, A1, f->p1);
    dSubtractVectors3(a2, A2, f->p2);
    dSubtractVectors3(d, A2, A1);
    const double k = bd->fps * bd->erp;
    const double k_susp = bd->fps * dJointGetHinge2Param(j, dParamSuspensionERP);
    for (int i = 0; i < 3; ++i) {
        pp_joint_row *r = next_row(bd);
        dCopyVector3(J1L(r), dirs[i]);
        dCalcVectorCross3(J1A(r), a1, dirs[i]);
        dCopyNegatedVector3(J2L(r), dirs[i]);
        dCalcVectorCross3(J2A(r), dirs[i], a2);
        r->c = (i == 0 ? k_susp : k) * dCalcVectorDot3(dirs[i], d);
    }
    bd->rows[0].cfm = dJointGetHinge2Param(j, dParamSuspensionCFM);
    pp_joint_row *r = next_row(bd);
    dCopyVector3(J1A(r), n);
    dCopyNegatedVector3(J2A(r), n);
    r->c = k * (cap->c0 * s - cap->s0 * c);
    limot l1, l2;
    limot_read(&l1, dJointGetHinge2Param, j, 0);
    limot_read(&l2, dJointGetHinge2Param, j, dParamGroup2 - dParamGroup1);
    if (angle_gate(&l1)) limot_test(&l1, dJointGetHinge2Angle1(j));
    limot_row(bd, &l1, ax1, LIMOT_ANGULAR, NULL, NULL);
    limot_row(bd, &l2, ax2, LIMOT_ANGULAR, NULL, NULL); /* axis 2: never a limit */
    return 1;
}

/* b1's centre -> b2's anchor (world): PR and piston measure their linear rows with it.
 * Without b2 ODE takes anchor2 - p1, negated when reversed. */
static void centre_to_anchor2(const joint_frame *f, const double A2[3], double dist[3],
                              double lanchor2[3])
{
    lanchor2[0] = lanchor2[1] = lanchor2[2] = 0.0;
    if (f->b2) {
        dSubtractVectors3(lanchor2, A2, f->p2);
        for (int i = 0; i < 3; ++i) dist[i] = lanchor2[i] + f->p2[i] - f->p1[i];
    } else if (f->reversed) {
        dSubtractVectors3(dist, f->p1, A2);
    } else {
        dSubtractVectors3(dist, A2, f->p1);
    }
}

/* PR: two angular rows (0, axP), (0, q), q = axR x axP, holding b2's rotoide axis on b1's;
 * two linear rows along axR and q holding b2's anchor on b1's prismatic line; LIMOT(axP,
 * linear) on the position (negated when reversed without b2), LIMOT(axR) on the angle. */
static int pr(row_builder *bd, const pp_joint_capture *cap)
{
    const joint_frame *f = &bd->f;
    dJointID j = f->joint;
    dVector3 axP, axR, axR2, q, A2, dist, wanchor2;
    dJointGetPRAxis1(j, axP);
    dJointGetPRAxis2(j, axR);
    dJointGetPRAnchor(j, A2);
    centre_to_anchor2(f, A2, dist, wanchor2);
    dCalcVectorCross3(q, axR, axP);
    captured_axis2(bd, cap, axR2);
    axis_alignment_rows(bd, axP, q, axR, axR2);
    pp_joint_row *r2 = next_row(bd), *r3 = next_row(bd);
    dCopyVector3(J1L(r2), axR);
    dCalcVectorCross3(J1A(r2), dist, axR);
    dCopyVector3(J1L(r3), q);
    dCalcVectorCross3(J1A(r3), dist, q);
    if (f->b2) {
        dCopyNegatedVector3(J2L(r2), axR);
        dCalcVectorCross3(J2A(r2), axR2, wanchor2);
        dCopyNegatedVector3(J2L(r3), q);
        dCalcVectorCross3(J2A(r3), q, wanchor2);
    }
    dVector3 err;
    to_world(err, f->R1, cap->anchor1);
    dSubtractVectors3(err, dist, err);
    const double k = bd->fps * bd->erp;
    r2->c = k * dCalcVectorDot3(axR, err);
    r3->c = k * dCalcVectorDot3(q, err);
    limot lp, lr;
    limot_read(&lp, dJointGetPRParam, j, 0);
    limot_read(&lr, dJointGetPRParam, j, dParamGroup2 - dParamGroup1);
    if (position_gate(&lp)) limot_test(&lp, dJointGetPRPosition(j));
    if (angle_gate(&lr)) {
        const double angle = dJointGetPRAngle(j);
        limot_test(&lr, f->reversed ? -angle : angle);
    }
    dVector3 axis;
    dCopyVector3(axis, axP);
    if (!f->b2 && f->reversed) dNegateVector3(axis);
    limot_row(bd, &lp, axis, LIMOT_LINEAR, NULL, NULL);
    limot_row(bd, &lr, axR, LIMOT_ANGULAR, NULL, NULL);
    return 1;
}

/* PU: one angular row about unit(ax1 x ax2) keeping the universal's axes perpendicular
 * (rate -k ax1.ax2); two linear rows across axP holding the anchors on the prismatic line;
 * LIMOT(ax1), LIMOT(ax2) on the angles, two-point LIMOT(axP) on the position. */
static int pu(row_builder *bd, const pp_joint_capture *cap)
{
    const joint_frame *f = &bd->f;
    dJointID j = f->joint;
    dVector3 ax1, ax2, u;
    dJointGetPUAxis1(j, f->reversed ? ax2 : ax1);
    dJointGetPUAxis2(j, f->reversed ? ax1 : ax2);
    dCalcVectorCross3(u, ax1, ax2);
    dNormalize3(u);
    const double k = bd->fps * bd->erp;
    pp_joint_row *r0 = next_row(bd);
    dCopyVector3(J1A(r0), u);
    if (f->b2) dCopyNegatedVector3(J2A(r0), u);
    r0->c = -k * dCalcVectorDot3(ax1, ax2);
    /* anchors: b2's is public, b1's captured */
    dVector3 an1, an2, axP, sep, p, q;
    to_world(an1, f->R1, cap->anchor1);
    dAddVectors3(an1, an1, f->p1);
    dJointGetPUAnchor(j, an2);
    dJointGetPUAxisP(j, axP);
    if (f->reversed) {
        /* ODE reads the prismatic axis through b2 there: without b2 that is the b1-frame
         * vector itself, taken as a world vector */
        dVector3 local;
        to_body(local, f->R1, axP);
        dCopyVector3(axP, local);
    }
    dSubtractVectors3(sep, an2, an1);
    dPlaneSpace(axP, p, q);
    pp_joint_row *rp = next_row(bd), *rq = next_row(bd);
    dCopyVector3(J1L(rp), p);
    dCopyVector3(J1L(rq), q);
    dSubtractVectors3(an1, an1, f->p1);
    dCalcVectorCross3(J1A(rp), an1, p);
    dCalcVectorCross3(J1A(rq), an1, q);
    if (f->b2) {
        dCopyNegatedVector3(J2L(rp), p);
        dCopyNegatedVector3(J2L(rq), q);
        dSubtractVectors3(an2, an2, f->p2);
        dCalcVectorCross3(J2A(rp), p, an2);
        dCalcVectorCross3(J2A(rq), q, an2);
    }
    rp->c = k * dCalcVectorDot3(p, sep);
    rq->c = k * dCalcVectorDot3(q, sep);
    limot l1, l2, lp;
    limot_read(&l1, dJointGetPUParam, j, dParamGroup1);
    limot_read(&l2, dJointGetPUParam, j, dParamGroup2);
    limot_read(&lp, dJointGetPUParam, j, dParamGroup3);
    if (position_gate(&lp)) limot_test(&lp, dJointGetPUPosition(j));
    const int gate1 = angle_gate(&l1), gate2 = angle_gate(&l2);
    if (gate1 || gate2) {
        /* public (angle1, angle2) = internal (a2, a1) when reversed */
        double pa1, pa2;
        dJointGetPUAngles(j, &pa1, &pa2);
        if (gate1) limot_test(&l1, f->reversed ? pa2 : pa1);
        if (gate2) limot_test(&l2, f->reversed ? pa1 : pa2);
    }
    limot_row(bd, &l1, ax1, LIMOT_ANGULAR, NULL, NULL);
    limot_row(bd, &l2, ax2, LIMOT_ANGULAR, NULL, NULL);
    if (!f->b2 && f->reversed) dNegateVector3(axP);
    limot_row(bd, &lp, axP, LIMOT_TWO_POINT, an1, an2);
    return 1;
}

/* Piston: two angular rows across ax1 holding b2's axis on b1's; two linear rows across ax1
 * holding b2's anchor on b1's axis line; LIMOT(ax1, linear) on the position (negated when
 * reversed without b2), LIMOT(ax1) on the angle. */
static int piston(row_builder *bd, const pp_joint_capture *cap)
{
    const joint_frame *f = &bd->f;
    dJointID j = f->joint;
    dVector3 A1, A2, ax1, ax2, p, q, dist, lanchor2;
    internal_anchors(f, dJointGetPistonAnchor, dJointGetPistonAnchor2, A1, A2);
    centre_to_anchor2(f, A2, dist, lanchor2);
    dJointGetPistonAxis(j, ax1);
    dPlaneSpace(ax1, p, q);
    captured_axis2(bd, cap, ax2);
    axis_alignment_rows(bd, p, q, ax1, ax2);
    pp_joint_row *rp = next_row(bd), *rq = next_row(bd);
    dCopyVector3(J1L(rp), p);
    dCalcVectorCross3(J1A(rp), dist, p);
    dCopyVector3(J1L(rq), q);
    dCalcVectorCross3(J1A(rq), dist, q);
    if (f->b2) {
        dCopyNegatedVector3(J2L(rp), p);
        dCalcVectorCross3(J2A(rp), p, lanchor2);
        dCopyNegatedVector3(J2L(rq), q);
        dCalcVectorCross3(J2A(rq), q, lanchor2);
    }
    dVector3 err;
    dSubtractVectors3(err, A1, f->p1);
    dSubtractVectors3(err, dist, err);
    const double k = bd->fps * bd->erp;
    rp->c = k * dCalcVectorDot3(p, err);
    rq->c = k * dCalcVectorDot3(q, err);
    limot lp, lr;
    limot_read(&lp, dJointGetPistonParam, j, 0);
    limot_read(&lr, dJointGetPistonParam, j, dParamGroup2 - dParamGroup1);
    if (position_gate(&lp)) limot_test(&lp, dJointGetPistonPosition(j));
    if (position_gate(&lr)) { /* ODE gates the piston's angle like a position */
        const double angle = dJointGetPistonAngle(j);
        limot_test(&lr, f->reversed ? -angle : angle);
    }
    dVector3 axis;
    dCopyVector3(axis, ax1);
    if (!f->b2 && f->reversed) dNegateVector3(axis);
    limot_row(bd, &lp, axis, LIMOT_LINEAR, NULL, NULL);
    limot_row(bd, &lr, ax1, LIMOT_ANGULAR, NULL, NULL);
    return 1;
}

/* AMotor Euler mode: the raw global Euler axes X (carried by one body) and Z (by the other)
 * from the public ones. ODE's public axes are G0 = Y x Z, G1 = Y = unit(Z x X), G2 = X x Y;
 * with X, Z unit and c = X.Z, s = |Z x X| = sqrt(1 - c^2): G0 = (X - c Z)/s and
 * G2 = (Z - c X)/s, so G0.G2 = -c and X = (G0 + c G2)/s, Z = (G2 + c G0)/s. */
static void euler_axes(dJointID j, dVector3 X, dVector3 Y, dVector3 Z)
{
    dVector3 G0, G2;
    dJointGetAMotorAxis(j, 0, G0);
    dJointGetAMotorAxis(j, 1, Y);
    dJointGetAMotorAxis(j, 2, G2);
    const double c = -dCalcVectorDot3(G0, G2);
    const double s = sqrt(1.0 - c * c);
    for (int i = 0; i < 3; ++i) {
        X[i] = (G0[i] + c * G2[i]) / s;
        Z[i] = (G2[i] + c * G0[i]) / s;
    }
}

/* AMotor: per axis with a motor or at a stop, LIMOT about the axis. User mode: the public
 * axes and the user's angles. Euler mode: rows about (Y x Z, Y, X x Y), the angles of
 * getInfo1's computeEulerAngles from the axes and the captured reference vectors. */
static int amotor(row_builder *bd, const pp_joint_capture *cap)
{
    const joint_frame *f = &bd->f;
    dJointID j = f->joint;
    const int euler = dJointGetAMotorMode(j) == dAMotorEuler;
    const int num = dJointGetAMotorNumAxes(j);
    dVector3 axes[3];
    double angles[3] = {0.0, 0.0, 0.0};
    for (int i = 0; i < num; ++i) dJointGetAMotorAxis(j, i, axes[i]);
    if (euler) {
        dVector3 X, Y, Z, refs[2], t;
        euler_axes(j, X, Y, Z);
        to_world(refs[0], f->R1, cap->euler_ref1);
        if (f->b2) to_world(refs[1], f->R2, cap->euler_ref2);
        else dCopyVector3(refs[1], cap->euler_ref2);
        /* reversed, the roles of the two bodies' references swap */
        const double *ref_x = refs[f->reversed ? 1 : 0], *ref_z = refs[f->reversed ? 0 : 1];
        dCalcVectorCross3(t, X, ref_x);
        angles[0] = -atan2(dCalcVectorDot3(Z, t), dCalcVectorDot3(Z, ref_x));
        dCalcVectorCross3(t, X, Y);
        angles[1] = -atan2(dCalcVectorDot3(Z, X), dCalcVectorDot3(Z, t));
        dCalcVectorCross3(t, Y, Z);
        angles[2] = -atan2(dCalcVectorDot3(ref_z, Y), dCalcVectorDot3(ref_z, t));
    } else {
        for (int i = 0; i < num; ++i) angles[i] = dJointGetAMotorAngle(j, i);
    }
    for (int i = 0; i < num; ++i) {
        limot l;
        limot_read(&l, dJointGetAMotorParam, j, i * dParamGroup);
        limot_test(&l, angles[i]);
        limot_row(bd, &l, axes[i], LIMOT_ANGULAR, NULL, NULL);
    }
    return 1;
}

/* LMotor: per axis with a motor, a linear LIMOT motor row along the axis (never a limit). The
 * public axis is the stored one (b1 or b2 frame, or world, by the declared relativity). */
static int lmotor(row_builder *bd, const pp_joint_capture *cap)
{
    const joint_frame *f = &bd->f;
    dJointID j = f->joint;
    const int num = dJointGetLMotorNumAxes(j);
    for (int i = 0; i < num; ++i) {
        limot l;
        limot_read(&l, dJointGetLMotorParam, j, i * dParamGroup);
        if (!(l.fmax > 0.0)) continue;
        int rel = cap->lmotor_rel[i];
        if (rel == 2 && !f->b2) rel = 1; /* as dJointSetLMotorAxis maps it */
        if (rel < 0 || rel > 2) return 0;
        dVector3 stored, ax;
        dJointGetLMotorAxis(j, i, stored);
        if (rel == 1) to_world(ax, f->R1, stored);
        else if (rel == 2) to_world(ax, f->R2, stored);
        else dCopyVector3(ax, stored);
        limot_row(bd, &l, ax, LIMOT_LINEAR, NULL, NULL);
    }
    return 1;
}

/* DBall: one row along n = unit(A1 - A2) (if the anchors meet: along their relative
 * velocity, else e_x) holding |A1 - A2| at the target distance, joint ERP and CFM. */
static void dball_row(row_builder *bd, const double A1[3], const double A2[3])
{
    const joint_frame *f = &bd->f;
    dJointID j = f->joint;
    const double min_length = 1e-12;
    dVector3 n;
    dSubtractVectors3(n, A1, A2);
    if (dCalcVectorLength3(n) < min_length) {
        dVector3 v1, v2 = {0.0, 0.0, 0.0, 0.0};
        dBodyGetPointVel(f->b1, A1[0], A1[1], A1[2], v1);
        if (f->b2) dBodyGetPointVel(f->b2, A2[0], A2[1], A2[2], v2);
        dSubtractVectors3(n, v1, v2);
        if (dCalcVectorLength3(n) < min_length) dAssignVector3(n, 1.0, 0.0, 0.0);
    }
    dNormalize3(n);
    pp_joint_row *r = next_row(bd);
    dVector3 a;
    dCopyVector3(J1L(r), n);
    dSubtractVectors3(a, A1, f->p1);
    dCalcVectorCross3(J1A(r), a, n);
    if (f->b2) {
        dCopyNegatedVector3(J2L(r), n);
        dSubtractVectors3(a, A2, f->p2);
        dCalcVectorCross3(J2A(r), n, a);
    }
    const double k = bd->fps * dJointGetDBallParam(j, dParamERP);
    r->c = k * (dJointGetDBallDistance(j) - dCalcPointsDistance3(A1, A2));
    r->cfm = dJointGetDBallParam(j, dParamCFM);
}

static int dball(row_builder *bd)
{
    dVector3 A1, A2;
    internal_anchors(&bd->f, dJointGetDBallAnchor1, dJointGetDBallAnchor2, A1, A2);
    dball_row(bd, A1, A2);
    return 1;
}

/* DHinge: the DBall row; two angular rows across ax1 holding b2's axis on it and an axial
 * row at the bodies' midpoint holding the anchors' separation along ax1 at zero, all three
 * at the DBall ERP's rate and the world CFM. */
static int dhinge(row_builder *bd, const pp_joint_capture *cap)
{
    const joint_frame *f = &bd->f;
    dJointID j = f->joint;
    dVector3 A1, A2, ax1, ax2, p, q, u;
    internal_anchors(f, dJointGetDHingeAnchor1, dJointGetDHingeAnchor2, A1, A2);
    dball_row(bd, A1, A2);
    dJointGetDHingeAxis(j, ax1);
    dPlaneSpace(ax1, p, q);
    captured_axis2(bd, cap, ax2);
    pp_joint_row *rp = next_row(bd), *rq = next_row(bd), *ra = next_row(bd);
    dCopyVector3(J1A(rp), p);
    dCopyVector3(J1A(rq), q);
    if (f->b2) {
        dCopyNegatedVector3(J2A(rp), p);
        dCopyNegatedVector3(J2A(rq), q);
    }
    dCalcVectorCross3(u, ax1, ax2);
    const double k = bd->fps * dJointGetDHingeParam(j, dParamERP);
    rp->c = k * dCalcVectorDot3(u, p);
    rq->c = k * dCalcVectorDot3(u, q);
    dCopyVector3(J1L(ra), ax1);
    if (f->b2) {
        dVector3 h;
        dAddScaledVectors3(h, f->p1, f->p2, -0.5, 0.5);
        dCalcVectorCross3(J1A(ra), h, ax1);
        dCopyNegatedVector3(J2L(ra), ax1);
        dCopyVector3(J2A(ra), J1A(ra));
    }
    dVector3 d;
    dSubtractVectors3(d, A1, A2);
    ra->c = -k * dCalcVectorDot3(ax1, d);
    return 1;
}

/* ---- capture ------------------------------------------------------------------------------ */

/* Axis 2 in b2's frame (world without b2) from the public axis 1: equal when assembled. */
static void capture_axis2(pp_joint_capture *cap, const joint_frame *f, const double ax1[3])
{
    if (f->b2) to_body(cap->axis2, f->R2, ax1);
    else dCopyVector3(cap->axis2, ax1);
}

/* qrel = q1^-1 q2 (no b2: q1^-1), as ODE computes it when the joint is set. */
static void capture_qrel(pp_joint_capture *cap, const joint_frame *f)
{
    if (f->b2) {
        dQMultiply1(cap->qrel, f->q1, f->q2);
    } else {
        cap->qrel[0] = f->q1[0];
        cap->qrel[1] = -f->q1[1];
        cap->qrel[2] = -f->q1[2];
        cap->qrel[3] = -f->q1[3];
    }
}

/* A prismatic joint's public position is pos = s axis . D, s = -1 when reversed without b2,
 * where D is the vector ODE's hidden offset makes zero at position 0 (slider: p1 - R2 offset
 * - p2; PR, PU: p1 + R1 anchor1 - A2). D is parallel to the axis when the joint is assembled,
 * so D = s pos axis: the offset is recovered at any prismatic position. */
static double prismatic_displacement(const joint_frame *f, double pos)
{
    return (!f->b2 && f->reversed) ? -pos : pos;
}

/* PR, PU: the anchor in b1's frame at position 0, R1^T (A2 - p1 + s pos axP). */
static void capture_prismatic_anchor1(pp_joint_capture *cap, const joint_frame *f,
                                      const double axP[3], const double A2[3], double pos)
{
    const double t = prismatic_displacement(f, pos);
    dVector3 v;
    for (int i = 0; i < 3; ++i) v[i] = A2[i] - f->p1[i] + t * axP[i];
    to_body(cap->anchor1, f->R1, v);
}

static void capture_slider_offset(pp_joint_capture *cap, const joint_frame *f)
{
    dVector3 ax, v;
    dJointGetSliderAxis(f->joint, ax);
    const double t = prismatic_displacement(f, dJointGetSliderPosition(f->joint));
    if (f->b2) {
        for (int i = 0; i < 3; ++i) v[i] = f->p1[i] - f->p2[i] - t * ax[i];
        to_body(cap->offset, f->R2, v);
    } else {
        for (int i = 0; i < 3; ++i) cap->offset[i] = f->p1[i] - t * ax[i];
    }
}

static void capture_fixed_offset(pp_joint_capture *cap, const joint_frame *f)
{
    if (f->b2) {
        dVector3 v;
        dSubtractVectors3(v, f->p1, f->p2);
        to_body(cap->offset, f->R1, v);
    } else {
        dCopyVector3(cap->offset, f->p1);
    }
}

/* hinge2: c0 = ax1 . ax2, s0 = |ax1 x ax2| (ODE stores them when the axes are set). */
static void capture_hinge2_angle(pp_joint_capture *cap, const joint_frame *f)
{
    dVector3 ax1, ax2, n;
    dJointGetHinge2Axis1(f->joint, ax1);
    dJointGetHinge2Axis2(f->joint, ax2);
    dCalcVectorCross3(n, ax1, ax2);
    cap->s0 = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    cap->c0 = dCalcVectorDot3(ax1, ax2);
}

/* AMotor Euler mode: ODE sets reference 1 = b2's Euler axis in b1's frame and reference 2 =
 * b1's Euler axis in b2's frame (world without b2); b1 carries X, or Z when reversed. */
static void capture_euler_references(pp_joint_capture *cap, const joint_frame *f)
{
    dVector3 X, Y, Z;
    euler_axes(f->joint, X, Y, Z);
    const double *on_b1 = f->reversed ? Z : X, *on_b2 = f->reversed ? X : Z;
    to_body(cap->euler_ref1, f->R1, on_b2);
    if (f->b2) to_body(cap->euler_ref2, f->R2, on_b1);
    else dCopyVector3(cap->euler_ref2, on_b1);
}

void pp_joint_capture_take(pp_joint_capture *capture, dJointID joint)
{
    int rel[3] = {-1, -1, -1};
    if (capture->joint == joint) memcpy(rel, capture->lmotor_rel, sizeof rel);
    memset(capture, 0, sizeof *capture);
    memcpy(capture->lmotor_rel, rel, sizeof rel);
    joint_frame f;
    if (!frame_of(joint, &f)) return;
    capture->joint = joint;
    capture->body1 = f.b1;
    capture->body2 = f.b2;
    capture->reversed = f.reversed;
    dVector3 ax, A2;
    switch (dJointGetType(joint)) {
    case dJointTypeHinge:
        dJointGetHingeAxis(joint, ax);
        capture_axis2(capture, &f, ax);
        break;
    case dJointTypePiston:
        dJointGetPistonAxis(joint, ax);
        capture_axis2(capture, &f, ax);
        break;
    case dJointTypeDHinge:
        dJointGetDHingeAxis(joint, ax);
        capture_axis2(capture, &f, ax);
        break;
    case dJointTypePR:
        dJointGetPRAxis2(joint, ax); /* the rotoide axis */
        capture_axis2(capture, &f, ax);
        dJointGetPRAxis1(joint, ax); /* the prismatic axis */
        dJointGetPRAnchor(joint, A2);
        capture_prismatic_anchor1(capture, &f, ax, A2, dJointGetPRPosition(joint));
        break;
    case dJointTypePU:
        dJointGetPUAxisP(joint, ax);
        dJointGetPUAnchor(joint, A2);
        capture_prismatic_anchor1(capture, &f, ax, A2, dJointGetPUPosition(joint));
        break;
    case dJointTypeSlider:
        capture_qrel(capture, &f);
        capture_slider_offset(capture, &f);
        break;
    case dJointTypeFixed:
        capture_qrel(capture, &f);
        capture_fixed_offset(capture, &f);
        break;
    case dJointTypeHinge2:
        if (f.b2) capture_hinge2_angle(capture, &f);
        break;
    case dJointTypeAMotor:
        if (dJointGetAMotorMode(joint) == dAMotorEuler) capture_euler_references(capture, &f);
        break;
    default:
        break;
    }
}

void pp_joint_capture_lmotor_rel(pp_joint_capture *capture, int axis, int rel)
{
    if (axis >= 0 && axis < 3) capture->lmotor_rel[axis] = rel;
}

/* ---- entry points ------------------------------------------------------------------------- */

static int capture_matches(const pp_joint_capture *capture, const joint_frame *f)
{
    return capture->joint == f->joint && capture->body1 == f->b1 && capture->body2 == f->b2 &&
           capture->reversed == f->reversed;
}

int pp_public_joint_rebuild(const pp_joint_capture *capture, dJointID joint, double fps,
                            double erp, double cfm, pp_joint_row rows[6],
                            pp_joint_wrench *motor)
{
    memset(motor, 0, sizeof *motor);
    row_builder bd = {rows, 0, fps, erp, cfm, {0}, motor};
    if (!frame_of(joint, &bd.f) || !capture_matches(capture, &bd.f)) return -1;
    int ok;
    switch (dJointGetType(joint)) {
    case dJointTypeBall: ok = ball(&bd); break;
    case dJointTypeHinge: ok = hinge(&bd, capture); break;
    case dJointTypeSlider: ok = slider(&bd, capture); break;
    case dJointTypeUniversal: ok = universal(&bd); break;
    case dJointTypeHinge2: ok = hinge2(&bd, capture); break;
    case dJointTypeFixed: ok = fixed(&bd, capture); break;
    case dJointTypePR: ok = pr(&bd, capture); break;
    case dJointTypePU: ok = pu(&bd, capture); break;
    case dJointTypePiston: ok = piston(&bd, capture); break;
    case dJointTypeAMotor: ok = amotor(&bd, capture); break;
    case dJointTypeLMotor: ok = lmotor(&bd, capture); break;
    case dJointTypeDBall: ok = dball(&bd); break;
    case dJointTypeDHinge: ok = dhinge(&bd, capture); break;
    default: ok = 0; break; /* Plane2D, Transmission, contact, null */
    }
    if (!ok) {
        memset(motor, 0, sizeof *motor);
        return -1;
    }
    return bd.m;
}

int pp_joint_capture_ensure(pp_joint_capture *capture, dJointID joint)
{
    joint_frame f;
    if (!frame_of(joint, &f)) return 0;
    if (!capture_matches(capture, &f)) pp_joint_capture_take(capture, joint);
    return 1;
}

int pp_public_joint_rows(pp_joint_capture *capture, dJointID joint, double fps, double erp,
                         double cfm, pp_joint_row rows[6])
{
    joint_frame f;
    if (!frame_of(joint, &f)) return -1;
    if (!capture_matches(capture, &f)) pp_joint_capture_take(capture, joint);
    pp_joint_wrench motor;
    const int m = pp_public_joint_rebuild(capture, joint, fps, erp, cfm, rows, &motor);
    if (m > 0 && motor.active) {
        dBodyAddForce(f.b1, motor.force[0][0], motor.force[0][1], motor.force[0][2]);
        dBodyAddTorque(f.b1, motor.torque[0][0], motor.torque[0][1], motor.torque[0][2]);
        if (f.b2) {
            dBodyAddForce(f.b2, motor.force[1][0], motor.force[1][1], motor.force[1][2]);
            dBodyAddTorque(f.b2, motor.torque[1][0], motor.torque[1][1], motor.torque[1][2]);
        }
    }
    return m;
}
