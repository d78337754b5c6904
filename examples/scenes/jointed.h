/*
 * Jointed scenes: mechanisms on ODE joints, driven by ODE's joint motors, in contact with
 * boxes. Under PP_MODEL_STANDARD and PP_MODEL_PEG the joints are solved in the same LCP as the
 * contacts (docs/joints.md); under PP_MODEL_ODE they are dWorldStep's.
 *
 *  - gripper: two fingers on slider motors squeeze a cube on the floor, then their kinematic
 *    carrier lifts it 0.2 m;
 *  - car: ODE's demo_crash car (a chassis on four sphere wheels, hinge2 joints with suspension,
 *    rear-wheel drive) driving into a wall of boxes;
 *  - arm: a 6-joint arm with a two-finger gripper picking a box off a table (joint-space PD
 *    through velocity motors), the benchmark's jointed scene.
 *
 * Each scene's controller is its before_step script (scenes.h): it sets the motors' targets
 * and the carrier's velocity before every step from the step index alone, so every model gets
 * the same commands at the same steps. Each scene also sets `configure` (scenes.h): its
 * surface (friction) goes into the pp_config of whoever creates the pegplus world.
 *
 * Which geoms collide. A mechanism's own parts overlap where they are joined (a wheel half
 * inside the chassis, links meeting at a hinge): every model skips the pairs of bodies joined
 * by a joint, as ODE's demos do in their near callback. Parts that are not joined to each
 * other can still meet (the arm's turret turns on its static pedestal, a link passes another),
 * so the scenes also keep them apart with category bits, which every model honours: a
 * mechanism's geoms are in category PP_SCENE_MECHANISM and do not collide with each other (nor,
 * for the arm, with the floor, the pedestal and the table, which they never reach: only the
 * cube is theirs to touch). pp_scene_max_penetration skips the pairs no model lets collide.
 *
 * bodies[] / geoms[] list every body, in the order given per scene below; a body without a
 * geom (the car's ballast) has geoms[i] = NULL.
 */
#ifndef PP_SCENES_JOINTED_H
#define PP_SCENES_JOINTED_H

#include "scenes.h"

/* Category bit of a mechanism's geoms (fingers, palm, links, chassis, wheels). */
#define PP_SCENE_MECHANISM 0x2ul

/* ---- gripper -------------------------------------------------------------------------------
 * The floor is the plane z = 0 (mu 0.8 for every pair). A cube of 0.1 m, 0.5 kg, rests on it
 * at the origin. A carrier (a kinematic body with a palm, a box 0.24 x 0.1 x 0.04 m whose
 * underside is 2 cm above the cube) holds two fingers (boxes 0.02 x 0.08 x 0.08 m, 0.1 kg,
 * 2 cm above the floor, 1 cm from the cube's faces along +-x) on slider joints along x. Each
 * slider's axis points at the cube, its motor runs at dParamVel = PP_GRIPPER_CLOSE_SPEED with
 * dParamFMax = PP_GRIPPER_FORCE from step 0 on (so the fingers close, then squeeze the cube
 * with 50 N each), stops at -5 mm and +3 cm of travel. The carrier is still until
 * t = PP_GRIPPER_LIFT_START, rises at PP_GRIPPER_LIFT_SPEED for PP_GRIPPER_LIFT_TIME (0.2 m),
 * then stays still (the script sets its velocity before every step).
 * bodies: [0] cube, [1] carrier, [2] finger on -x, [3] finger on +x.
 * joints: dBodyGetJoint(bodies[2 or 3], 0) is that finger's slider (body 1 the finger, body 2
 * the carrier). Made for h = 0.01 s and 250 steps. */
#define PP_GRIPPER_CLOSE_SPEED 0.1 /* m/s, each finger */
#define PP_GRIPPER_FORCE 50.0      /* N, each finger's motor */
#define PP_GRIPPER_LIFT_START 0.5  /* s */
#define PP_GRIPPER_LIFT_TIME 1.0   /* s */
#define PP_GRIPPER_LIFT_SPEED 0.2  /* m/s */
#define PP_GRIPPER_MU 0.8
void pp_scene_gripper(pp_scene *scene, double h);

/* ---- car -----------------------------------------------------------------------------------
 * After ODE's demo_crash (ode/demo/demo_crash.cpp), headless and driven straight: a chassis box
 * 3.5 x 2.5 x 1 m of 0.5 kg with its centre 1 m up, a 0.5 kg ballast body with no geom 5 m
 * below it on a fixed joint (the demo's centre-of-mass offset: the car cannot roll over), and
 * four wheels, spheres of radius 0.5 m and 1 kg (the demo's wheels are spheres too), at
 * (+-1.15, +-1.25, 0.5) m touching the floor, each on a hinge2 joint to the chassis (anchor at
 * its centre, axis 1 = z, axis 2 = y), suspension ERP 0.8 and CFM 1e-5, steering locked
 * (dParamLoStop = dParamHiStop = 0). The rear wheels (x < 0) are driven: dParamVel2 =
 * -PP_CAR_SPEED / 0.5 (axis 2's rate is chassis minus wheel, so the wheel turns about +y and
 * the car drives along +x) with dParamFMax2 = 25 N m; the front wheels roll freely. World ERP
 * 0.8 and CFM 1e-5 as in the demo; gravity 9.81 m/s^2 (the demo's 1.5 made for h = 0.05).
 * Friction: 1.0 for a pair with a wheel, 0.5 otherwise (the demo: 20 and 0.5).
 * The wall: PP_CAR_WALL_WIDE x PP_CAR_WALL_HIGH boxes of 1 m and 1 kg, its near face at
 * x = PP_CAR_WALL_X, centred on y = 0, rows exactly touching each other and the floor, boxes of
 * a row 1 mm apart. The car's nose (x = 1.75 m) starts 4.25 m from it. One row: with two
 * rows of four, the island of the car and the wall has LCPs of 1 800-2 600 unknowns under PEG
 * once they meet, and Lemke runs out of its budget every step (so does a plain 5 kg box
 * rammed into that wall, without joints: README "Known problems", large islands).
 * bodies: [0] chassis, [1] ballast, [2..5] wheels (front left, front right, rear left, rear
 * right), then the wall's boxes row by row from the floor. Made for h = 0.01 s and 300 steps
 * (3 s: the car reaches the wall at about 1.6 s). */
#define PP_CAR_SPEED 4.0  /* m/s, the rear wheels' target rim speed */
#define PP_CAR_WALL_X 6.0 /* m */
#define PP_CAR_WALL_WIDE 3
#define PP_CAR_WALL_HIGH 1
#define PP_CAR_BODIES 6   /* bodies before the wall's */
void pp_scene_car(pp_scene *scene, double h);

/* ---- arm -----------------------------------------------------------------------------------
 * A 6-joint arm on a static pedestal (0.2 x 0.2 x 0.3 m at the origin) picks a cube of 6 cm and
 * 0.2 kg off a static table (top at z = 0.25 m, x from 0.35 to 0.65 m) with a two-finger
 * gripper; friction 0.8 for every pair. Joints, built in the reference pose (upper arm up,
 * forearm along +x, hand down), every one attached (child, parent) so its angle is the
 * child's turn about the axis:
 *   1 hinge z at (0, 0, 0.3) to the world (turret, 2 kg), 2 hinge y at the shoulder (0, 0, 0.4)
 *   (upper arm, 0.35 m, 1 kg), 3 hinge y at the elbow (0, 0, 0.75) (forearm, 0.35 m, 0.8 kg),
 *   4 hinge x at (0.3, 0, 0.75) (wrist roll, 0.2 kg), 5 hinge y at the wrist (0.35, 0, 0.75)
 *   (0.2 kg), 6 hinge z at (0.35, 0, 0.69) (hand: a palm 0.05 x 0.16 x 0.02 m, 0.3 kg);
 *   two fingers (0.03 x 0.015 x 0.07 m, 0.05 kg) on sliders along y towards each other.
 * Control (the script): waypoints of the wrist point in the arm's plane, solved for joints 2,
 * 3 and 5 (two-link inverse kinematics, elbow up, the hand kept vertical; joints 4 and 6 stay
 * at 0), joint 1's yaw, and the gripper open or closed; between waypoints the joint targets
 * q* follow a smoothstep in joint space, and every hinge's velocity motor gets dParamVel =
 * dq* + 10 (q* - q), at most 2 rad/s, dParamFMax 40 N m (joints 1-3) or 10 N m (4-6). The
 * fingers' motors run at -+5 cm/s (open / close), dParamFMax 20 N. Timeline: to 10 cm above
 * the cube by 1.0 s, down to it by 1.6 s, close until 2.1 s, lift 15 cm by 3.1 s, turn the
 * turret 0.6 rad by 4.1 s, hold until 5 s.
 * bodies: [0] the cube, [1..6] the links of joints 1..6, [7], [8] the fingers (-y, +y).
 * Made for h = 0.01 s and 500 steps. */
#define PP_ARM_MU 0.8
#define PP_ARM_CUBE 0.06 /* m */
void pp_scene_arm(pp_scene *scene, double h);

#endif
