/*
 * Linked only when rocelab links libpcap and libdbus-1 statically (apps/rocelab/meson.build).
 * libdbus-1.a's system-dependent layer refers to libsystemd for socket activation, which a
 * D-Bus server uses to take over sockets from systemd; libpcap is a D-Bus client and never
 * gets there. Debian installs no libsystemd.a, and its shared library would bring back the
 * seven libraries the static link leaves out, so these two answer as libsystemd does in a
 * process that systemd did not start with sockets: no sockets passed.
 */
int sd_listen_fds(int unset_environment);
int sd_is_socket(int fd, int family, int type, int listening);

int sd_listen_fds(int unset_environment)
{
	(void)unset_environment;
	return 0;
}

int sd_is_socket(int fd, int family, int type, int listening)
{
	(void)fd;
	(void)family;
	(void)type;
	(void)listening;
	return 0;
}
