/*
 * An ODE joint's constraint rows, exactly as dWorldStep gets them: by calling the joint's own
 * dxJoint<Type>::getInfo1 / getInfo2 (docs/joints.md "Where the rows come from").
 *
 * ODE's public C API does not expose every joint's state (hinge axis 2 in body 2's frame,
 * slider and fixed offsets and reference quaternions, hinge2's c0/s0, Plane2D's motors,
 * Transmission's phase), so rows rebuilt from it are exact only for joints pegplus saw at
 * their set-up pose. libode's C++ member functions getInfo1 / getInfo2 are exported (nm -D
 * libode.so.8) and take only plain arguments:
 *     void getInfo1(dxJoint::Info1 *info)            Info1 = {uint8 m, nub}
 *     void getInfo2(dReal worldFPS, dReal worldERP, int rowskip, dReal *J1, dReal *J2,
 *                   int pairskip, dReal *pairRhsCfm, dReal *pairLoHi, int *findex)
 * (ODE 0.15 .. 0.16.x, double precision). A dJointID is the dxJoint *, passed as `this`, so C
 * calls them through asm labels with the mangled names (Itanium C++ ABI, SysV x86-64 and
 * AArch64 pass `this` as the first argument). cmake/PegplusDependencies.cmake checks at
 * configure time that the symbols link; without them (PP_HAVE_ODE_JOINT_ROWS 0) pegplus
 * refuses worlds with joints under its models with PP_ERR_UNSUPPORTED, as before.
 *
 * Calling convention, as dWorldStep (step.cpp, dxStepIsland_Stage2b): getInfo1 then getInfo2
 * exactly once per step (both have side effects: getInfo1 stores the limit state getInfo2
 * uses; a powered joint at a limit adds its motor force to the bodies' accumulators inside
 * getInfo2; Transmission advances its phase), rows preset to J = 0, rhs = 0, cfm = world CFM,
 * lo = -inf, hi = +inf, findex = -1, at the poses stored in ODE.
 */
#include "world_internal.h"

#include <math.h>
#include <string.h>

#if PP_HAVE_ODE_JOINT_ROWS

typedef struct ode_info1 {
    unsigned char m, nub;
} ode_info1;

typedef void info1_fn(dJointID self, ode_info1 *info);
typedef void info2_fn(dJointID self, double fps, double erp, int rowskip, double *J1,
                      double *J2, int pairskip, double *rhs_cfm, double *lo_hi, int *findex);

#define PP_JOINT_TYPE(name, len)                                                            \
    extern info1_fn info1_##name __asm__("_ZN" #len "dxJoint" #name "8getInfo1EPN7dxJoint5Info1E"); \
    extern info2_fn info2_##name __asm__("_ZN" #len "dxJoint" #name "8getInfo2EddiPdS0_iS0_S0_Pi");

PP_JOINT_TYPE(Ball, 11)
PP_JOINT_TYPE(Hinge, 12)
PP_JOINT_TYPE(Slider, 13)
PP_JOINT_TYPE(Universal, 16)
PP_JOINT_TYPE(Hinge2, 13)
PP_JOINT_TYPE(Fixed, 12)
PP_JOINT_TYPE(AMotor, 13)
PP_JOINT_TYPE(LMotor, 13)
PP_JOINT_TYPE(Plane2D, 14)
PP_JOINT_TYPE(PR, 9)
PP_JOINT_TYPE(PU, 9)
PP_JOINT_TYPE(Piston, 13)
PP_JOINT_TYPE(DBall, 12)
PP_JOINT_TYPE(DHinge, 13)
PP_JOINT_TYPE(Transmission, 19)

static int functions(dJointID joint, info1_fn **f1, info2_fn **f2)
{
#define PP_CASE(type, name)                                                                 \
    case type:                                                                              \
        *f1 = info1_##name;                                                                 \
        *f2 = info2_##name;                                                                 \
        return 1;
    switch (dJointGetType(joint)) {
        PP_CASE(dJointTypeBall, Ball)
        PP_CASE(dJointTypeHinge, Hinge)
        PP_CASE(dJointTypeSlider, Slider)
        PP_CASE(dJointTypeUniversal, Universal)
        PP_CASE(dJointTypeHinge2, Hinge2)
        PP_CASE(dJointTypeFixed, Fixed)
        PP_CASE(dJointTypeAMotor, AMotor)
        PP_CASE(dJointTypeLMotor, LMotor)
        PP_CASE(dJointTypePlane2D, Plane2D)
        PP_CASE(dJointTypePR, PR)
        PP_CASE(dJointTypePU, PU)
        PP_CASE(dJointTypePiston, Piston)
        PP_CASE(dJointTypeDBall, DBall)
        PP_CASE(dJointTypeDHinge, DHinge)
        PP_CASE(dJointTypeTransmission, Transmission)
    default:
        return 0;
    }
#undef PP_CASE
}

int pp_ode_joint_rows_available(void)
{
    return 1;
}

int pp_ode_joint_rows(dJointID joint, double fps, double erp, double cfm, pp_joint_row rows[6])
{
    info1_fn *f1;
    info2_fn *f2;
    if (!functions(joint, &f1, &f2)) return -1;
    ode_info1 info = {0, 0};
    f1(joint, &info);
    const int m = info.m;
    if (m == 0) return 0;
    if (m > 6) return -1;
    double J1[36], J2[36], rhs_cfm[12], lo_hi[12];
    int findex[6];
    memset(J1, 0, sizeof J1);
    memset(J2, 0, sizeof J2);
    for (int i = 0; i < m; ++i) {
        rhs_cfm[2 * i] = 0.0;
        rhs_cfm[2 * i + 1] = cfm;
        lo_hi[2 * i] = -dInfinity;
        lo_hi[2 * i + 1] = dInfinity;
        findex[i] = -1;
    }
    f2(joint, fps, erp, 6, J1, J2, 2, rhs_cfm, lo_hi, findex);
    for (int i = 0; i < m; ++i) {
        pp_joint_row *r = &rows[i];
        memcpy(r->J, &J1[6 * i], 6 * sizeof(double));
        memcpy(r->J + 6, &J2[6 * i], 6 * sizeof(double));
        r->c = rhs_cfm[2 * i];
        r->cfm = rhs_cfm[2 * i + 1];
        r->lo = lo_hi[2 * i];
        r->hi = lo_hi[2 * i + 1];
    }
    return m;
}

#else

int pp_ode_joint_rows_available(void)
{
    return 0;
}

int pp_ode_joint_rows(dJointID joint, double fps, double erp, double cfm, pp_joint_row rows[6])
{
    (void)joint;
    (void)fps;
    (void)erp;
    (void)cfm;
    (void)rows;
    return -1;
}

#endif
