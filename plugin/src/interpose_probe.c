/*
 * dCollide and dJointCreateContact as libpegplus.so (and libpegplus-run.so) export them: the
 * near-callback probe's window onto a program's callback (near_probe.c, docs/drop-in.md).
 *
 * A program linked with -lpegplus before -lode (CMake's target_link_libraries(... pegplus)
 * does that: pegplus's own dependency on libode comes after it) has its undefined dCollide
 * and dJointCreateContact bound to these, the first definitions in the dynamic linker's
 * search order. Outside a probe they forward, unchanged, to the next definition after this
 * library (libode's, found with dlsym(RTLD_NEXT)); during a probe the probe answers. Only in
 * the shared libraries: a static link has libode's symbols and calls pp_near_probe_collide /
 * pp_near_probe_joint_create_contact from its callback instead.
 *
 * The dGeomHeightfieldDataBuild* builders and dGeomHeightfieldDataDestroy are watched the
 * same way: they forward to libode's and record the samples (terrain_ode.c), which ODE has no
 * getter for; a static link calls pp_world_register_heightfield instead.
 */
#define _GNU_SOURCE /* RTLD_NEXT, RTLD_DEFAULT */
#include "world_internal.h"

#include <dlfcn.h>
#include <string.h>

typedef int collide_fn(dGeomID, dGeomID, int, dContactGeom *, int);
typedef dJointID create_contact_fn(dWorldID, dJointGroupID, const dContact *);

/* The run interposer (plugin/run) watches the contacts of an unprobed callback through this. */
void (*pp_interpose_contact_hook)(dWorldID w, const dContact *contact);

/* dlsym's object pointer as a function pointer (POSIX guarantees the conversion; ISO C has
 * no cast for it, hence the copy). */
static void next_symbol(const char *name, void *function_pointer)
{
    void *f = dlsym(RTLD_NEXT, name);
    PP_ASSERT(f, "libode's dCollide and dJointCreateContact are found after libpegplus");
    memcpy(function_pointer, &f, sizeof f);
}

static int pegplus_collide(dGeomID o1, dGeomID o2, int flags, dContactGeom *contact, int skip)
{
    static collide_fn *real;
    int n;
    if (pp_probe_collide(o1, o2, flags, contact, skip, &n)) return n;
    if (!real) next_symbol("dCollide", &real);
    return real(o1, o2, flags, contact, skip);
}

static dJointID pegplus_joint_create_contact(dWorldID w, dJointGroupID group, const dContact *c)
{
    static create_contact_fn *real;
    dJointID j;
    if (pp_probe_joint_create_contact(w, group, c, &j)) return j;
    if (pp_interpose_contact_hook) pp_interpose_contact_hook(w, c);
    if (!real) next_symbol("dJointCreateContact", &real);
    j = real(w, group, c);
    pp_ode_record_contact(w, c, j); /* PP_MODEL_ODE's contact list */
    return j;
}

int dCollide(dGeomID o1, dGeomID o2, int flags, dContactGeom *contact, int skip)
    __attribute__((alias("pegplus_collide"), visibility("default")));
dJointID dJointCreateContact(dWorldID w, dJointGroupID group, const dContact *c)
    __attribute__((alias("pegplus_joint_create_contact"), visibility("default")));

/* ---- Heightfield builds: the samples ODE cannot give back (terrain_ode.c) --------------- */

typedef void build_double_fn(dHeightfieldDataID, const double *, int, dReal, dReal, int, int,
                             dReal, dReal, dReal, int);
typedef void build_single_fn(dHeightfieldDataID, const float *, int, dReal, dReal, int, int,
                             dReal, dReal, dReal, int);
typedef void build_short_fn(dHeightfieldDataID, const short *, int, dReal, dReal, int, int,
                            dReal, dReal, dReal, int);
typedef void build_byte_fn(dHeightfieldDataID, const unsigned char *, int, dReal, dReal, int,
                           int, dReal, dReal, dReal, int);
typedef void build_callback_fn(dHeightfieldDataID, void *, dHeightfieldGetHeight *, dReal, dReal,
                               int, int, dReal, dReal, dReal, int);
typedef void data_destroy_fn(dHeightfieldDataID);

/* Record what ODE's builder is given (copied when ODE copies), after ODE took it. */
static void capture(dHeightfieldDataID d, int type, const void *samples, int copy,
                    dHeightfieldGetHeight *callback, void *user, dReal width, dReal depth,
                    int width_samples, int depth_samples, dReal scale, dReal offset,
                    dReal thickness, int wrap)
{
    if (!d || width_samples < 2 || depth_samples < 2 || (type != 0 && !samples) ||
        (type == 0 && !callback))
        return; /* ODE's own checks answer; nothing the pegplus models could use */
    pp_heightfield_record r = {d, type, samples, NULL, callback, user, width, depth, scale,
                               offset, thickness, width_samples, depth_samples, wrap};
    pp_heightfield_capture(&r, copy);
}

#define PP_BUILD(name, fn_type, sample_type, type)                                              \
    static void pegplus_##name(dHeightfieldDataID d, const sample_type *h, int copy, dReal w,   \
                               dReal dp, int nw, int nd, dReal scale, dReal offset,            \
                               dReal thickness, int wrap)                                      \
    {                                                                                           \
        static fn_type *real;                                                                   \
        if (!real) next_symbol(#name, &real);                                                   \
        real(d, h, copy, w, dp, nw, nd, scale, offset, thickness, wrap);                        \
        capture(d, type, h, copy, NULL, NULL, w, dp, nw, nd, scale, offset, thickness, wrap);   \
    }                                                                                           \
    void name(dHeightfieldDataID, const sample_type *, int, dReal, dReal, int, int, dReal,     \
              dReal, dReal, int) __attribute__((alias("pegplus_" #name), visibility("default")));

PP_BUILD(dGeomHeightfieldDataBuildDouble, build_double_fn, double, 4)
PP_BUILD(dGeomHeightfieldDataBuildSingle, build_single_fn, float, 3)
PP_BUILD(dGeomHeightfieldDataBuildShort, build_short_fn, short, 2)
PP_BUILD(dGeomHeightfieldDataBuildByte, build_byte_fn, unsigned char, 1)

static void pegplus_build_callback(dHeightfieldDataID d, void *user,
                                   dHeightfieldGetHeight *callback, dReal w, dReal dp, int nw,
                                   int nd, dReal scale, dReal offset, dReal thickness, int wrap)
{
    static build_callback_fn *real;
    if (!real) next_symbol("dGeomHeightfieldDataBuildCallback", &real);
    real(d, user, callback, w, dp, nw, nd, scale, offset, thickness, wrap);
    capture(d, 0, NULL, 0, callback, user, w, dp, nw, nd, scale, offset, thickness, wrap);
}

static void pegplus_heightfield_data_destroy(dHeightfieldDataID d)
{
    static data_destroy_fn *real;
    pp_heightfield_capture_forget(d);
    if (!real) next_symbol("dGeomHeightfieldDataDestroy", &real);
    real(d);
}

void dGeomHeightfieldDataBuildCallback(dHeightfieldDataID, void *, dHeightfieldGetHeight *,
                                       dReal, dReal, int, int, dReal, dReal, dReal, int)
    __attribute__((alias("pegplus_build_callback"), visibility("default")));
void dGeomHeightfieldDataDestroy(dHeightfieldDataID)
    __attribute__((alias("pegplus_heightfield_data_destroy"), visibility("default")));

/* Does the process resolve both names to these (not to libode's)? */
static int interposer_check(void)
{
    collide_fn *collide = pegplus_collide, *found_collide;
    create_contact_fn *create = pegplus_joint_create_contact, *found_create;
    void *a = dlsym(RTLD_DEFAULT, "dCollide"), *b = dlsym(RTLD_DEFAULT, "dJointCreateContact");
    memcpy(&found_collide, &a, sizeof a);
    memcpy(&found_create, &b, sizeof b);
    return found_collide == collide && found_create == create;
}

__attribute__((constructor)) static void install_check(void)
{
    pp_probe_interposer_check = interposer_check;
}
