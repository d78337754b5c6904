/* placeholder: the LCP work replaces this file. */
typedef int pp_placeholder_lemke;
