/* commands.h - a cli/ header in a tree that breaks the rooms' include rule (tests/CMakeLists.txt).
 */
