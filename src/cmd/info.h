/* info.h - the introspection commands registered by server_register():
 * INFO (info.c) and COMMAND (command.c). */
#ifndef SHOAL_INFO_H
#define SHOAL_INFO_H
void info_register(void);
void command_register(void);
#endif
