/* placeholder: the PLUS work replaces this file. */
typedef int pp_placeholder_plus;
