/* info.h - INFO and COMMAND (introspection), in info.c and command.c. */
#ifndef SHOAL_INFO_H
#define SHOAL_INFO_H
void info_register(void);
#endif
