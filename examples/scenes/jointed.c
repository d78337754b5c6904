/* Jointed scenes: a gripper, ODE's crash-demo car, a 6-joint arm (see jointed.h). */
#define _DEFAULT_SOURCE /* M_PI */
#include "jointed.h"

#include "pegplus/pegplus.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Category bit of the arm's fixtures (floor, pedestal, table): they and the arm's parts
 * exclude each other, so the arm touches only the cube. */
#define FIXTURE 0x4ul

static void jointed_begin(pp_scene *s, const char *name)
{
    pp_scenes_init_ode();
    memset(s, 0, sizeof *s);
    s->name = name;
    s->world = dWorldCreate();
    s->space = dHashSpaceCreate(0);
    dWorldSetGravity(s->world, 0, 0, -9.81);
    s->ground = dCreatePlane(s->space, 0, 0, 1, 0);
}

/* A part of a mechanism: collides with anything but the mechanism's other parts (and, with
 * `fixtures_too`, the arm's fixtures). */
static void mechanism_part(dGeomID g, int fixtures_too)
{
    dGeomSetCategoryBits(g, PP_SCENE_MECHANISM);
    dGeomSetCollideBits(g, ~(PP_SCENE_MECHANISM | (fixtures_too ? FIXTURE : 0ul)));
}

static void fixture(dGeomID g)
{
    dGeomSetCategoryBits(g, FIXTURE);
    dGeomSetCollideBits(g, ~PP_SCENE_MECHANISM);
}

static dBodyID part_box(pp_scene *s, double lx, double ly, double lz, double mass, double x,
                        double y, double z, int fixtures_too)
{
    dBodyID b = pp_scene_add_box(s, (const double[3]){lx, ly, lz}, mass, (const double[3]){x, y, z});
    mechanism_part(dBodyGetFirstGeom(b), fixtures_too);
    return b;
}

/* A slider from `finger` to `palm` along `axis` (world frame, pointing from the finger at the
 * object), its motor at rest with dParamFMax = fmax, stops at lo and hi metres of travel. */
static dJointID finger_slider(pp_scene *s, dBodyID finger, dBodyID palm, const double axis[3],
                              double fmax, double lo, double hi)
{
    dJointID j = dJointCreateSlider(s->world, 0);
    dJointAttach(j, finger, palm);
    dJointSetSliderAxis(j, axis[0], axis[1], axis[2]);
    dJointSetSliderParam(j, dParamLoStop, lo);
    dJointSetSliderParam(j, dParamHiStop, hi);
    dJointSetSliderParam(j, dParamVel, 0.0);
    dJointSetSliderParam(j, dParamFMax, fmax);
    return j;
}

/* ---- gripper ------------------------------------------------------------------------------ */

typedef struct gripper_script {
    int lift_first, lift_end; /* steps of the rise: [first, end) */
    dBodyID carrier;
    dJointID slider[2];
} gripper_script;

static void gripper_before_step(pp_scene *s, int step)
{
    const gripper_script *g = s->script;
    double vz = step >= g->lift_first && step < g->lift_end ? PP_GRIPPER_LIFT_SPEED : 0.0;
    dBodySetLinearVel(g->carrier, 0, 0, vz);
    dBodySetAngularVel(g->carrier, 0, 0, 0);
    for (int k = 0; k < 2; ++k) dJointSetSliderParam(g->slider[k], dParamVel, PP_GRIPPER_CLOSE_SPEED);
}

static void gripper_configure(const pp_scene *s, struct pp_config *config)
{
    (void)s;
    config->surface.mu = PP_GRIPPER_MU;
}

void pp_scene_gripper(pp_scene *s, double h)
{
    jointed_begin(s, "gripper");
    const double cube = 0.1, finger[3] = {0.02, 0.08, 0.08}, gap = 0.01;
    pp_scene_add_box(s, (const double[3]){cube, cube, cube}, 0.5, (const double[3]){0, 0, 0.5 * cube});
    /* the palm's underside 2 cm above the cube's top */
    dBodyID carrier = part_box(s, 0.24, 0.1, 0.04, 1.0, 0, 0, cube + 0.02 + 0.02, 0);
    dBodySetKinematic(carrier);
    const double fx = 0.5 * cube + gap + 0.5 * finger[0], fz = 0.02 + 0.5 * finger[2];
    dBodyID left = part_box(s, finger[0], finger[1], finger[2], 0.1, -fx, 0, fz, 0);
    dBodyID right = part_box(s, finger[0], finger[1], finger[2], 0.1, fx, 0, fz, 0);
    gripper_script *g = malloc(sizeof *g);
    if (!g) return; /* no script: the fingers stay open */
    g->carrier = carrier;
    g->slider[0] = finger_slider(s, left, carrier, (const double[3]){1, 0, 0}, PP_GRIPPER_FORCE, -0.005, 0.03);
    g->slider[1] = finger_slider(s, right, carrier, (const double[3]){-1, 0, 0}, PP_GRIPPER_FORCE, -0.005, 0.03);
    g->lift_first = (int)lround(PP_GRIPPER_LIFT_START / h);
    g->lift_end = g->lift_first + (int)lround(PP_GRIPPER_LIFT_TIME / h);
    s->script = g;
    s->script_destroy = free;
    s->before_step = gripper_before_step;
    s->configure = gripper_configure;
}

/* ---- car ---------------------------------------------------------------------------------- */

static int car_surface(void *user, dGeomID g1, dGeomID g2, pp_surface *surface)
{
    (void)user;
    int wheel = dGeomGetClass(g1) == dSphereClass || dGeomGetClass(g2) == dSphereClass;
    surface->mu = wheel ? 1.0 : 0.5;
    return 1;
}

static void car_configure(const pp_scene *s, struct pp_config *config)
{
    (void)s;
    config->surface_fn = car_surface;
    config->surface_user = NULL;
}

void pp_scene_car(pp_scene *s, double h)
{
    (void)h;
    jointed_begin(s, "car");
    dWorldSetERP(s->world, 0.8);
    dWorldSetCFM(s->world, 1e-5);
    const double length = 3.5, width = 2.5, height = 1.0, radius = 0.5, start_z = 1.0;
    dBodyID chassis = part_box(s, length, width, height, 0.5, 0, 0, start_z, 0);
    /* the ballast: the chassis' copy 5 m below on a fixed joint, no geom */
    dBodyID ballast = dBodyCreate(s->world);
    dMass m;
    dMassSetBoxTotal(&m, 0.5, length, width, height);
    dBodySetMass(ballast, &m);
    dBodySetPosition(ballast, 0, 0, start_z - 5.0);
    (void)pp_scene_append(s, ballast, NULL);
    dJointID fixed = dJointCreateFixed(s->world, 0);
    dJointAttach(fixed, chassis, ballast);
    dJointSetFixed(fixed);
    const double wx = 0.4 * length - 0.5 * radius, wy = 0.5 * width;
    const double at[4][2] = {{wx, wy}, {wx, -wy}, {-wx, wy}, {-wx, -wy}};
    for (int i = 0; i < 4; ++i) {
        dBodyID wheel = pp_scene_add_sphere(s, radius, 1.0,
                                            (const double[3]){at[i][0], at[i][1], start_z - 0.5 * height});
        mechanism_part(dBodyGetFirstGeom(wheel), 0);
        dJointID j = dJointCreateHinge2(s->world, 0);
        dJointAttach(j, chassis, wheel);
        const dReal *a = dBodyGetPosition(wheel);
        dJointSetHinge2Anchor(j, a[0], a[1], a[2]);
        const dReal up[3] = {0, 0, 1}, axle[3] = {0, 1, 0};
        dJointSetHinge2Axes(j, up, axle);
        dJointSetHinge2Param(j, dParamSuspensionERP, 0.8);
        dJointSetHinge2Param(j, dParamSuspensionCFM, 1e-5);
        dJointSetHinge2Param(j, dParamLoStop, 0.0);
        dJointSetHinge2Param(j, dParamHiStop, 0.0);
        if (at[i][0] < 0.0) { /* rear: driven */
            dJointSetHinge2Param(j, dParamVel2, -PP_CAR_SPEED / radius);
            dJointSetHinge2Param(j, dParamFMax2, 25.0);
        }
    }
    const double side = 1.0, joint = 0.001;
    const double wall = PP_CAR_WALL_WIDE * side + (PP_CAR_WALL_WIDE - 1) * joint;
    for (int row = 0; row < PP_CAR_WALL_HIGH; ++row)
        for (int i = 0; i < PP_CAR_WALL_WIDE; ++i)
            pp_scene_add_box(s, (const double[3]){side, side, side}, 1.0,
                             (const double[3]){PP_CAR_WALL_X + 0.5 * side,
                                               -0.5 * wall + (i + 0.5) * side + i * joint,
                                               (row + 0.5) * side});
    s->configure = car_configure;
}

/* ---- arm ---------------------------------------------------------------------------------- */

enum { ARM_JOINTS = 6, ARM_WAYPOINTS = 7 };

/* Geometry of the reference pose (jointed.h): the shoulder S in the arm's plane (x, z), the
 * upper arm and forearm lengths, the wrist W above the hand's palm centre by ARM_HAND, the
 * fingers' centres below the palm centre by ARM_FINGER. */
#define ARM_SHOULDER_Z 0.4
#define ARM_LINK 0.35
#define ARM_HAND 0.09
#define ARM_FINGER 0.045
#define ARM_TABLE_TOP 0.25
#define ARM_CUBE_X 0.5

typedef struct arm_waypoint {
    double t;            /* s */
    double x, z, yaw;    /* the wrist point in the arm's plane (m), joint 1's angle (rad) */
    int closed;          /* the gripper closes from this waypoint on */
} arm_waypoint;

/* To 10 cm above the cube, down to it (the fingers' lower ends 1.5 cm above the table), close,
 * lift 15 cm, turn, hold (jointed.h). */
static const arm_waypoint ARM_PATH[ARM_WAYPOINTS] = {
    {0.0, ARM_LINK, ARM_SHOULDER_Z + ARM_LINK, 0.0, 0},
    {1.0, ARM_CUBE_X, ARM_TABLE_TOP + 0.015 + 0.035 + ARM_FINGER + ARM_HAND + 0.10, 0.0, 0},
    {1.6, ARM_CUBE_X, ARM_TABLE_TOP + 0.015 + 0.035 + ARM_FINGER + ARM_HAND, 0.0, 1},
    {2.1, ARM_CUBE_X, ARM_TABLE_TOP + 0.015 + 0.035 + ARM_FINGER + ARM_HAND, 0.0, 1},
    {3.1, ARM_CUBE_X, ARM_TABLE_TOP + 0.015 + 0.035 + ARM_FINGER + ARM_HAND + 0.15, 0.0, 1},
    {4.1, ARM_CUBE_X, ARM_TABLE_TOP + 0.015 + 0.035 + ARM_FINGER + ARM_HAND + 0.15, 0.6, 1},
    {5.0, ARM_CUBE_X, ARM_TABLE_TOP + 0.015 + 0.035 + ARM_FINGER + ARM_HAND + 0.15, 0.6, 1},
};

typedef struct arm_script {
    double h;
    double q[ARM_WAYPOINTS][ARM_JOINTS]; /* joint targets at the waypoints */
    dJointID hinge[ARM_JOINTS], slider[2];
} arm_script;

/* Joints 2, 3, 5 putting the wrist at (x, z) of the arm's plane with the hand vertical.
 * The two links as vectors from the shoulder, u = L (sin q2, cos q2) and f = L (cos(q2 + q3),
 * -sin(q2 + q3)) (a turn q about +y takes x towards -z), i.e. at the angles a1 = pi/2 - q2
 * and a2 = -(q2 + q3) from the x axis: the planar two-link problem with the relative angle
 * b = a2 - a1 = -q3 - pi/2, cos b = (D^2 - 2 L^2) / (2 L^2), b < 0 for the elbow up, and
 * a1 = atan2(dz, dx) - atan2(L sin b, L + L cos b). The hand's pitch is q2 + q3 + q5 = 0. */
static void arm_inverse(double x, double z, double q[ARM_JOINTS])
{
    const double L = ARM_LINK, dx = x, dz = z - ARM_SHOULDER_Z;
    double c = (dx * dx + dz * dz - 2.0 * L * L) / (2.0 * L * L);
    c = fmax(-1.0, fmin(1.0, c));
    const double b = -acos(c);
    const double a1 = atan2(dz, dx) - atan2(L * sin(b), L + L * cos(b));
    q[1] = 0.5 * M_PI - a1;
    q[2] = -b - 0.5 * M_PI;
    q[3] = 0.0;
    q[4] = -(q[1] + q[2]);
    q[5] = 0.0;
}

static void arm_before_step(pp_scene *s, int step)
{
    const arm_script *a = s->script;
    const double t = step * a->h, gain = 10.0, max_rate = 2.0;
    int w = 0;
    while (w + 2 < ARM_WAYPOINTS && t >= ARM_PATH[w + 1].t) ++w;
    /* smoothstep from waypoint w to w + 1: u = 3 r^2 - 2 r^3, du/dt = 6 r (1 - r) / T */
    const double T = ARM_PATH[w + 1].t - ARM_PATH[w].t;
    const double r = fmin(1.0, fmax(0.0, (t - ARM_PATH[w].t) / T));
    const double u = r * r * (3.0 - 2.0 * r), du = t < ARM_PATH[w + 1].t ? 6.0 * r * (1.0 - r) / T : 0.0;
    for (int j = 0; j < ARM_JOINTS; ++j) {
        const double dq = a->q[w + 1][j] - a->q[w][j];
        const double target = a->q[w][j] + u * dq;
        double vel = du * dq + gain * (target - dJointGetHingeAngle(a->hinge[j]));
        vel = fmax(-max_rate, fmin(max_rate, vel));
        dJointSetHingeParam(a->hinge[j], dParamVel, vel);
    }
    /* The fingers: closing at 5 cm/s (or holding), and centred on the palm. Once both squeeze
     * the cube at dParamFMax their motors cancel, so the cube and the fingers together could
     * slide along the palm under any sideways load (the turret's turn); the centring term
     * -+ 50 d, d = (p_left - p_right) / 2 the pair's shift towards +y, lets one finger give way
     * as soon as the shift passes 1 mm. */
    const double close = ARM_PATH[w].closed ? 0.05 : 0.0;
    const double shift = 0.5 * (dJointGetSliderPosition(a->slider[0]) - dJointGetSliderPosition(a->slider[1]));
    dJointSetSliderParam(a->slider[0], dParamVel, close - 50.0 * shift);
    dJointSetSliderParam(a->slider[1], dParamVel, close + 50.0 * shift);
}

static void arm_configure(const pp_scene *s, struct pp_config *config)
{
    (void)s;
    config->surface.mu = PP_ARM_MU;
}

static dJointID arm_hinge(pp_scene *s, dBodyID child, dBodyID parent, double x, double y,
                          double z, double ax, double ay, double az, double fmax)
{
    dJointID j = dJointCreateHinge(s->world, 0);
    dJointAttach(j, child, parent);
    dJointSetHingeAnchor(j, x, y, z);
    dJointSetHingeAxis(j, ax, ay, az);
    dJointSetHingeParam(j, dParamVel, 0.0);
    dJointSetHingeParam(j, dParamFMax, fmax);
    return j;
}

void pp_scene_arm(pp_scene *s, double h)
{
    jointed_begin(s, "arm");
    fixture(s->ground);
    const double cube = PP_ARM_CUBE;
    pp_scene_add_box(s, (const double[3]){cube, cube, cube}, 0.2,
                     (const double[3]){ARM_CUBE_X, 0, ARM_TABLE_TOP + 0.5 * cube});
    dGeomID pedestal = dCreateBox(s->space, 0.2, 0.2, 0.3);
    dGeomSetPosition(pedestal, 0, 0, 0.15);
    fixture(pedestal);
    dGeomID table = dCreateBox(s->space, 0.3, 0.4, ARM_TABLE_TOP);
    dGeomSetPosition(table, 0.5, 0, 0.5 * ARM_TABLE_TOP);
    fixture(table);

    const double S = ARM_SHOULDER_Z, L = ARM_LINK, E = S + L, W = ARM_LINK;
    const double palm_z = E - ARM_HAND;
    dBodyID link[ARM_JOINTS];
    link[0] = part_box(s, 0.16, 0.16, 0.1, 2.0, 0, 0, S - 0.05, 1);
    link[1] = part_box(s, 0.06, 0.06, L, 1.0, 0, 0, S + 0.5 * L, 1);
    link[2] = part_box(s, 0.30, 0.05, 0.05, 0.8, 0.15, 0, E, 1);
    link[3] = part_box(s, 0.05, 0.05, 0.05, 0.2, 0.325, 0, E, 1);
    link[4] = part_box(s, 0.05, 0.05, 0.06, 0.2, W, 0, E - 0.03, 1);
    link[5] = part_box(s, 0.05, 0.16, 0.02, 0.3, W, 0, palm_z, 1);
    const double fy = 0.5 * cube + 0.02 + 0.0075, fz = palm_z - ARM_FINGER;
    dBodyID left = part_box(s, 0.03, 0.015, 0.07, 0.05, W, -fy, fz, 1);
    dBodyID right = part_box(s, 0.03, 0.015, 0.07, 0.05, W, fy, fz, 1);

    arm_script *a = malloc(sizeof *a);
    if (!a) return; /* no script: the arm hangs limp */
    a->h = h;
    a->hinge[0] = arm_hinge(s, link[0], NULL, 0, 0, S - 0.1, 0, 0, 1, 40.0);
    a->hinge[1] = arm_hinge(s, link[1], link[0], 0, 0, S, 0, 1, 0, 40.0);
    a->hinge[2] = arm_hinge(s, link[2], link[1], 0, 0, E, 0, 1, 0, 40.0);
    a->hinge[3] = arm_hinge(s, link[3], link[2], 0.3, 0, E, 1, 0, 0, 10.0);
    a->hinge[4] = arm_hinge(s, link[4], link[3], W, 0, E, 0, 1, 0, 10.0);
    a->hinge[5] = arm_hinge(s, link[5], link[4], W, 0, E - 0.06, 0, 0, 1, 10.0);
    a->slider[0] = finger_slider(s, left, link[5], (const double[3]){0, 1, 0}, 20.0, -0.01, 0.03);
    a->slider[1] = finger_slider(s, right, link[5], (const double[3]){0, -1, 0}, 20.0, -0.01, 0.03);
    for (int w = 0; w < ARM_WAYPOINTS; ++w) {
        if (w == 0) memset(a->q[0], 0, sizeof a->q[0]);
        else arm_inverse(ARM_PATH[w].x, ARM_PATH[w].z, a->q[w]);
        a->q[w][0] = ARM_PATH[w].yaw;
    }
    s->script = a;
    s->script_destroy = free;
    s->before_step = arm_before_step;
    s->configure = arm_configure;
}
