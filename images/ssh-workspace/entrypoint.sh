#!/bin/sh
# Entryway SSH workspace entrypoint: runs sshd in the foreground as the current (non-root) user.
#   ENTRYWAY_SSHD_PORT    port to listen on (default 2222)
#   ENTRYWAY_SSHD_CONFIG  sshd_config (default /etc/ssh/entryway/sshd_config)
#   ENTRYWAY_HOST_KEY_DIR where the host key lives; on the home volume so it survives restarts
#                         (default $HOME/.entryway)
#   ENTRYWAY_SSHD         the sshd binary (default /usr/sbin/sshd)
#   ENTRYWAY_TCP_FORWARDING  no (default) or local: AllowTcpForwarding and
#                         AllowStreamLocalForwarding (local: `ssh -L`, for VS Code Remote-SSH)
# Extra arguments are passed to sshd (e.g. -o LogLevel=DEBUG).
set -eu

port="${ENTRYWAY_SSHD_PORT:-2222}"
config="${ENTRYWAY_SSHD_CONFIG:-/etc/ssh/entryway/sshd_config}"
sshd="${ENTRYWAY_SSHD:-/usr/sbin/sshd}"
user="$(id -un)"
home="${HOME:-/home/$user}"
keydir="${ENTRYWAY_HOST_KEY_DIR:-$home/.entryway}"
hostkey="$keydir/ssh_host_ed25519_key"

if [ "$(id -u)" = "0" ] && [ -z "${ENTRYWAY_ALLOW_ROOT:-}" ]; then
  echo "entrypoint: refusing to run sshd as root; run the workspace as its user (runAsUser)" >&2
  exit 1
fi

forwarding="${ENTRYWAY_TCP_FORWARDING:-no}"
case "$forwarding" in
  no | local) ;;
  *)
    echo "entrypoint: ENTRYWAY_TCP_FORWARDING must be no or local, not $forwarding" >&2
    exit 1
    ;;
esac

# A first start on an empty home volume: the image's skeleton and a host key of its own.
if [ ! -e "$home/.profile" ] && [ -d /etc/skel ]; then
  cp -rn /etc/skel/. "$home/" 2>/dev/null || true
fi
if [ ! -s "$hostkey" ]; then
  mkdir -p "$keydir"
  chmod 700 "$keydir"
  ssh-keygen -q -t ed25519 -N "" -C "entryway-workspace" -f "$hostkey"
fi

# -p (not -o Port=): a port on the command line replaces the config file's Port lines.
# -o on the command line wins over the config file (sshd keeps the first value it reads).
set -- -D -e -f "$config" -h "$hostkey" -p "$port" -o "AllowUsers=$user" \
  -o "AllowTcpForwarding=$forwarding" -o "AllowStreamLocalForwarding=$forwarding" "$@"
# PerSourcePenalties exists from OpenSSH 9.8; older sshd has no penalties to turn off.
if "$sshd" -t -f "$config" -h "$hostkey" -o PerSourcePenalties=no >/dev/null 2>&1; then
  set -- "$@" -o PerSourcePenalties=no
fi
exec "$sshd" "$@"
