/* A user program built against the installed pegplus: a box falls for 0.5 s in free flight
 * under PP_MODEL_STANDARD; exits 0 only if it fell as g t^2 / 2 says. */
#include <math.h>
#include <pegplus/pegplus.h>
#include <stdio.h>

int main(void)
{
    dInitODE2(0);
    dWorldID world = dWorldCreate();
    dWorldSetGravity(world, 0, 0, -9.81);
    dBodyID body = dBodyCreate(world);
    dMass m;
    dMassSetBoxTotal(&m, 1.0, 1, 1, 1);
    dBodySetMass(body, &m);
    pp_config config = pp_config_default();
    config.model = PP_MODEL_STANDARD;
    pp_world *pw = NULL;
    if (pp_world_create(world, NULL, &config, &pw) != PP_OK || pp_world_register_body(pw, body) != PP_OK)
        return 1;
    for (int i = 0; i < 50; ++i)
        if (pp_world_step(pw, 0.01) != PP_OK) return 1;
    /* semi-implicit Euler: z_n = -g h^2 n (n + 1) / 2 */
    double z = dBodyGetPosition(body)[2], expected = -9.81 * 0.01 * 0.01 * 50 * 51 / 2;
    printf("pegplus %s consumer: z = %.6f (expected %.6f)\n", PP_VERSION_STRING, z, expected);
    pp_world_destroy(pw);
    dWorldDestroy(world);
    dCloseODE();
    return fabs(z - expected) < 1e-12 ? 0 : 1;
}
