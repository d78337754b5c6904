/*
 * PEG's warm start keeps one record a constraint set, also for two sets that share their
 * primary contact (plugin/src/warm_start.c set_members; docs/performance.md "PEG's sets keyed
 * by their members"). Two X sets of one face pair can have the same primary (a vertex-face
 * contact) with other secondaries (edge-edge contacts); keyed by the primary alone they had
 * one record, the next step's warm basis made both primaries basic, and M_BB held two equal
 * p columns: singular, so the solve went to Lemke.
 *
 * islands10 (pp_scene_islands seed 1: 10 stacks of 3 boxes at rest, I and X sets among PEG's
 * sets), PEG, clock-free, STEPS steps; after each step the warm start is saved as text
 * (pp_world_save_warm_start) and its entries read:
 *  - some steps' warm starts hold two basis records of one primary (the same geoms, contact
 *    kind, features, set kind, size and directions) with other members: the sets are kept
 *    apart. Without the members in the key there is one such record, never two;
 *  - no such pair has both primaries' p basic (bit 0 of the record's first byte, Lemke's
 *    basis, warm_start.c): the answer's basis is nonsingular, and so is the next step's
 *    warm basis built from the records;
 *  - the text holding the pairs restores into the world and saves again to the same text
 *    (the MEMBERS field reads back).
 * islands100 (100 such stacks), PEG, clock-free, steps 1..WARM_STEPS - 1: at most
 * MAX_PIVOTING steps take a Lemke pivot (pp_step_stats lcp_warm_started 0). With the sets'
 * records shared every one of those 99 steps pivoted (3 191 pivots: the singular warm bases
 * sent stacks to Lemke step after step); with their own records 2 steps (27 pivots).
 */
#include "pegplus/pegplus.h"
#include "it_common.h"
#include "it_heap_state.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { STEPS = 300, STACKS = 10, WARM_STEPS = 100, MANY_STACKS = 100, MAX_PIVOTING = 10 };

/* A basis entry of the text: its key but MEMBERS, MEMBERS, and its record's first byte. */
typedef struct entry {
    char primary[160], members[24];
    unsigned first_byte;
} entry;

/* The basis entries (answer 0) of a warm-start text; returns their count. */
static int basis_entries(const char *text, entry **out)
{
    int n = 0, capacity = 0;
    entry *e = NULL;
    for (const char *line = strstr(text, "\ne "); line; line = strstr(line + 1, "\ne ")) {
        char a[16], b[16], members[24], data[8];
        int ck, fa, fb, sk, sc, dir, answer, size;
        if (sscanf(line + 1, "e %15s %15s %d %d %d %d %d %d %23s %d %d %7s", a, b, &ck, &fa, &fb,
                   &sk, &sc, &dir, members, &answer, &size, data) != 12)
            ck_abort_msg("an entry of a version 2 text has 12 fields: %.80s", line + 1);
        if (answer != 0 || sc < 2) continue;
        if (n == capacity) {
            capacity = capacity ? 2 * capacity : 64;
            e = realloc(e, (size_t)capacity * sizeof *e);
            ck_assert_ptr_nonnull(e);
        }
        snprintf(e[n].primary, sizeof e[n].primary, "%s %s %d %d %d %d %d %d", a, b, ck, fa, fb,
                 sk, sc, dir);
        snprintf(e[n].members, sizeof e[n].members, "%s", members);
        ck_assert_int_eq(sscanf(data, "%2x", &e[n].first_byte), 1);
        ++n;
    }
    *out = e;
    return n;
}

START_TEST(test_sets_sharing_a_primary_keep_their_records)
{
    pp_scenes_init_ode();
    pp_scene scene;
    pp_scene_islands(&scene, STACKS, 0.0, 1);
    pp_world *pw = pp_it_world_clock_free(&scene, PP_MODEL_PEG);
    int shared_steps = 0, pairs = 0, round_trips = 0;
    for (int s = 0; s < STEPS; ++s) {
        ck_assert_int_eq(pp_world_step(pw, 0.01), PP_OK);
        char *text = NULL;
        ck_assert_int_eq(pp_world_save_warm_start(pw, &text), PP_OK);
        ck_assert_msg(strstr(text, "pegplus-warm-start 2\n") == text, "header");
        entry *e = NULL;
        const int n = basis_entries(text, &e);
        int shared = 0;
        for (int i = 0; i < n; ++i)
            for (int j = i + 1; j < n; ++j) {
                if (strcmp(e[i].primary, e[j].primary)) continue;
                ck_assert_str_ne(e[i].members, e[j].members); /* one record a key */
                ck_assert_msg(!((e[i].first_byte & 1) && (e[j].first_byte & 1)),
                              "step %d: two sets of primary %s both with p basic", s,
                              e[i].primary);
                ++shared;
            }
        pairs += shared;
        shared_steps += shared > 0;
        if (shared && round_trips < 3) { /* MEMBERS read back: the same text saved again */
            ck_assert_int_eq(pp_world_restore_warm_start(pw, text), PP_OK);
            char *again = NULL;
            ck_assert_int_eq(pp_world_save_warm_start(pw, &again), PP_OK);
            ck_assert_str_eq(again, text);
            free(again);
            ++round_trips;
        }
        free(e);
        free(text);
    }
    printf("check_peg_set_keys: islands10, PEG, %d steps: %d with sets sharing a primary (%d "
           "pairs)\n", STEPS, shared_steps, pairs);
    ck_assert_int_gt(shared_steps, 0);
    pp_world_destroy(pw);
    pp_scene_destroy(&scene);
}
END_TEST

START_TEST(test_islands100_warm_bases_hold)
{
    pp_scenes_init_ode();
    pp_scene scene;
    pp_scene_islands(&scene, MANY_STACKS, 0.0, 1);
    pp_world *pw = pp_it_world_clock_free(&scene, PP_MODEL_PEG);
    int pivoting = 0, ix_steps = 0;
    for (int s = 0; s < WARM_STEPS; ++s) {
        ck_assert_int_eq(pp_world_step(pw, 0.01), PP_OK);
        const pp_step_stats *t = pp_world_get_stats(pw);
        ix_steps += t->peg_x_sets > 0;
        if (s > 0) pivoting += !t->lcp_warm_started;
    }
    printf("check_peg_set_keys: islands100, PEG, steps 1-%d: %d took a Lemke pivot; X sets in "
           "%d steps\n", WARM_STEPS - 1, pivoting, ix_steps);
    ck_assert_int_eq(ix_steps, WARM_STEPS);
    ck_assert_int_le(pivoting, MAX_PIVOTING);
    pp_world_destroy(pw);
    pp_scene_destroy(&scene);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("peg_set_keys");
    TCase *tc = tcase_create("warm_start");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_sets_sharing_a_primary_keep_their_records);
    tcase_add_test(tc, test_islands100_warm_bases_hold);
    suite_add_tcase(s, tc);
    return pp_it_run(s);
}
