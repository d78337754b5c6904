/* placeholder: the geometry work replaces this file. */
typedef int pp_placeholder_gjk;
