/* placeholder until the polytope API lands (pp_convex_create / pp_world_register_convex). */
#include "world_internal.h"

void pp_convex_records_free(pp_world *world)
{
    (void)world;
}
