/*
 * An ODE joint's constraint rows rebuilt from ODE's public C API (docs/joints-public-rows.md): the
 * second source of joint rows, next to ode_joint_rows.c (which calls libode's private
 * dxJoint<Type>::getInfo1/getInfo2). Same rows, same order, same conventions
 * (docs/joints-public-rows.md): J = [J1 linear, J1 angular, J2 linear, J2 angular] in ODE's
 * INTERNAL body order (b1 = the joint's first non-NULL body; an attach (0, b) is stored as (b, 0)),
 * world frame, about each body's centre; c, cfm, lo, hi exactly as getInfo2 writes them, the
 * limit/motor rows included.
 *
 * The public API does not expose every joint's state (docs/joints-public-rows.md), so what it lacks
 * is captured once, when pegplus first sees the joint (pp_joint_capture): hinge / piston / DHinge
 * axis 2 in body 2's frame, slider and fixed qrel and offsets, hinge2's c0 / s0, PR's rotoide axis
 * in body 2's frame and its anchor in body 1's frame, PU's anchor in body 1's frame, AMotor Euler
 * reference vectors. A capture is exact when the joint is assembled at that moment (no constraint
 * error: the usual case, pegplus created right after the world is built); the slider, PR and PU
 * captures undo a prismatic displacement through the public position, so they need no return to the
 * set-up pose. A joint that drifted before the capture (stepped by ODE, then switched to pegplus)
 * carries the drift into its rows.
 *
 * Not rebuildable (return -1): Plane2D (its motor parameters have setters only),
 * Transmission (its phase is integrated inside getInfo2), contact and null joints, and an
 * LMotor axis with a motor whose body relativity was not declared (ODE 0.16 has no
 * dJointGetLMotorAxisRel: declare it with pp_joint_capture_lmotor_rel).
 */
#ifndef PP_JOINT_ROWS_PUBLIC_H
#define PP_JOINT_ROWS_PUBLIC_H

#include <ode/ode.h>

#include "pegplus/peg.h"

/* What the public API cannot give, captured when pegplus first sees the joint. Frames: "b1",
 * "b2" are ODE's internal bodies; without b2 a "b2 frame" quantity is kept in world frame,
 * as ODE keeps it. Zero-initialise, then pp_joint_capture_take (or let pp_public_joint_rows
 * take it on first use). */
typedef struct pp_joint_capture {
    dJointID joint;          /* the joint captured; NULL: nothing captured yet */
    dBodyID body1, body2;    /* ODE's internal b1, b2 at capture (another attachment recaptures) */
    int reversed;            /* attached as (0, b) at capture */
    double axis2[3];         /* hinge, piston, DHinge: axis 2 in b2's frame (R2^T ax1);
                                PR: the rotoide axis in b2's frame (R2^T axR) */
    double qrel[4];          /* slider, fixed: q1^-1 q2 (no b2: q1^-1) */
    double offset[3];        /* slider: b1's centre in b2's frame at slider position 0
                                (R2^T (p1 - p2 - pos ax1); no b2: world p1 - pos ax1);
                                fixed: R1^T (p1 - p2) (no b2: world p1) */
    double anchor1[3];       /* PR, PU: the anchor in b1's frame at prismatic position 0 */
    double c0, s0;           /* hinge2: cos and sin of the angle between its axes */
    double euler_ref1[3];    /* AMotor Euler: b2's Euler axis in b1's frame */
    double euler_ref2[3];    /* AMotor Euler: b1's Euler axis in b2's frame (no b2: world) */
    int lmotor_rel[3];       /* LMotor: each axis' relativity as given to dJointSetLMotorAxis
                                (0 world, 1 b1, 2 b2); -1 undeclared */
} pp_joint_capture;

/* The external force ODE's getInfo2 adds for a motor powered at a stop (joints-public-rows.md):
 * force and torque on ODE's internal b1 ([0]) and b2 ([1]), about their centres, world frame. */
typedef struct pp_joint_wrench {
    int active;              /* 1 if some motor of the joint is powered at a stop */
    double force[2][3];      /* N */
    double torque[2][3];     /* N m */
} pp_joint_wrench;

/* Capture what the rows need beyond the public API, at the joint's current pose (which should
 * be its assembled set-up pose). Keeps the declared LMotor relativities of the same joint. */
void pp_joint_capture_take(pp_joint_capture *capture, dJointID joint);

/* Declare the relativity (0 world, 1 b1, 2 b2, as passed to dJointSetLMotorAxis) of LMotor
 * axis `axis` (0..2). Call after pp_joint_capture_take. */
void pp_joint_capture_lmotor_rel(pp_joint_capture *capture, int axis, int rel);

/* The joint's rows without side effects: fills rows[0..m-1] (J, c, cfm, lo, hi; body_a and
 * body_b are left to the caller) for fps = 1/h and the world's ERP and CFM, and sets *motor
 * to the external force of a motor powered at a stop (zero and inactive otherwise). The
 * capture must be of this joint and attachment. Returns m (0..6), or -1 if the rows cannot
 * be rebuilt from the public API (see above) or the capture does not match. */
int pp_public_joint_rebuild(const pp_joint_capture *capture, dJointID joint, double fps,
                            double erp, double cfm, pp_joint_row rows[6],
                            pp_joint_wrench *motor);

/* Take the capture if it is empty or of another joint or attachment (as pp_public_joint_rows
 * does). Returns 0 for a joint with no body. */
int pp_joint_capture_ensure(pp_joint_capture *capture, dJointID joint);

/* Drop-in for pp_ode_joint_rows: takes the capture if it is empty or of another joint or
 * attachment, rebuilds the rows, and, like getInfo2, adds a powered-at-stop motor's force to
 * the bodies' accumulators (dBodyAddForce / dBodyAddTorque), so a caller that reads the
 * accumulators after building the rows sees what dWorldStep sees. Returns m or -1. */
int pp_public_joint_rows(pp_joint_capture *capture, dJointID joint, double fps, double erp,
                         double cfm, pp_joint_row rows[6]);

#endif
