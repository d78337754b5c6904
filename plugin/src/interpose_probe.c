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
