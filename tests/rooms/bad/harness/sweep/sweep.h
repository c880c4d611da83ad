/* sweep.h - a harness/sweep header in a tree that breaks the rooms' include rule. */
