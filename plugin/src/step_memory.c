/*
 * Per-step memory of the pegplus models (docs/style.md "Memory"): arrays that grow to the peak and
 * are reused, never allocated inside a solver's inner loop. The island work
 * (pp_island_work) is sized by the largest island, so the step's memory follows its largest
 * island, not the sum of them all.
 */
#include "world_internal.h"

#include "pegplus/impact.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

pp_status pp_grow(void **array, int *capacity, int need, size_t size)
{
    if (need <= *capacity) return PP_OK;
    int cap = *capacity > 0 ? *capacity : 16;
    while (cap < need) cap = cap > INT_MAX / 2 ? need : 2 * cap; /* no int overflow */
    void *grown = realloc(*array, (size_t)cap * size);
    if (!grown) {
        pp_log(PP_LOG_ERROR, "out of memory growing an array to %d elements", cap);
        return PP_ERR_NO_MEMORY;
    }
    *array = grown;
    *capacity = cap;
    return PP_OK;
}

pp_status pp_grow_together(void **const arrays[], const size_t sizes[], int count, int *capacity,
                           int need)
{
    if (need <= *capacity) return PP_OK;
    int grown = *capacity;
    for (int i = 0; i < count; ++i) {
        grown = *capacity; /* each array from the shared capacity: pp_grow gives each the same */
        pp_status st = pp_grow(arrays[i], &grown, need, sizes[i]);
        if (st != PP_OK) return st; /* those grown so far hold more than *capacity: harmless */
    }
    *capacity = grown;
    return PP_OK;
}

void pp_step_scratch_free(pp_step_scratch *s)
{
    free(s->shapes);
    free(s->shape_geom);
    free(s->shape_body);
    free(s->shape_motion);
    free(s->aabbs);
    free(s->static_shapes);
    free(s->static_aabbs);
    free(s->is_static);
    free(s->attachment);
    free(s->shape_terrain);
    free(s->shape_triangle);
    free(s->terrain_hits);
    free(s->body_shape_first);
    free(s->body_shapes);
    pp_broadphase_destroy(s->broadphase);
    free(s->sap_index);
    free(s->pairs);
    free(s->pair_sorted);
    free(s->island_of_body);
    free(s->island_pair_first);
    free(s->island_body_first);
    free(s->island_joint_first);
    free(s->island_joints);
    free(s->island_bodies);
    free(s->union_root);
    pp_constraint_list_free(&s->all);
    pp_plus_solver_destroy(s->plus);
    pp_plus_joint_space_destroy(s->plus_joint_space);
    free(s->plus_work);
    free(s->plus_jac);
    free(s->plus_params);
    free(s->plus_frame);
    free(s->plus_source);
    free(s->plus_held);
    free(s->plus_v);
    free(s->plus_pi);
    free(s->plus_dv);
    free(s->plus_bodies);
    free(s->plus_nu);
    free(s->plus_dnu);
    free(s->plus_rows);
    free(s->plus_joint);
    free(s->plus_joint_first);
    free(s->impact_info);
    free(s->plus_contact);
    free(s->plus_island);
    free(s->plus_body);
    free(s->plus_first);
    free(s->info);
    for (int i = 0; i < s->worker_count; ++i) {
        pp_island_work_free(&s->workers[i].iw);
        pp_constraint_list_free(&s->workers[i].built);
        free(s->workers[i].info);
        pp_warm_store_destroy(s->workers[i].warm);
        pp_warm_store_destroy(s->workers[i].warm_prev);
        pp_warm_store_destroy(s->workers[i].warm_kept);
    }
    free(s->workers);
    pp_thread_pool_destroy(s->pool);
    free(s->outcomes);
    free(s->island_set_first);
    free(s->island_order);
    free(s->body_mark);
    pp_warm_store_destroy(s->warm_prev);
    free(s->body_local);
    memset(s, 0, sizeof *s);
}
