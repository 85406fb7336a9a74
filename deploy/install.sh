#!/usr/bin/env bash
# Installs the controller on its host from a wheel (make dist), as root: a virtual environment
# at /opt/jackpotd with the wheel and its runtime dependencies, the systemd units of systemd/,
# the users (sysusers.d) and the folders (tmpfiles.d). docs/operations.md, "1. Install".
#
#   deploy/install.sh dist/paigow_jackpot-<version>-py3-none-any.whl
#
# Run it again to upgrade, or to repair: every step puts its files back as they are shipped
# and leaves anything else (the configuration, the journal, the keys) alone. It enables and
# starts nothing: approve the software first (docs/operations.md section 3).
#
# Environment:
#   PYTHON           the interpreter the environment is made from (python3)
#   JACKPOTD_PREFIX  the environment's folder (/opt/jackpotd); the units are written to name it
#   JACKPOTD_ROOT    the root the units, users and folders go under (/): another root stages
#                    an installation (an image, a test) and leaves this machine's systemd alone
set -euo pipefail
umask 022

wheel=${1:-}
python=${PYTHON:-python3}
prefix=${JACKPOTD_PREFIX:-/opt/jackpotd}
root=${JACKPOTD_ROOT:-/}
source_tree=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

fail() {
    echo "deploy/install.sh: $*" >&2
    exit 1
}

[[ -n $wheel && $wheel == *.whl && -f $wheel ]] ||
    fail "usage: deploy/install.sh WHEEL (a paigow_jackpot-*.whl that make dist built; got '${wheel}')"
# Plain absolute paths: the prefix is written into the units (sed below, and systemd's quoting).
for path in "$prefix" "$root"; do
    [[ $path =~ ^/[A-Za-z0-9._/-]*$ ]] ||
        fail "JACKPOTD_PREFIX and JACKPOTD_ROOT must be absolute paths of letters, digits and ._-/ (got '$path')"
done
if [[ $root == / && $(id -u) != 0 ]]; then
    fail "run it as root (it installs into $prefix and /etc/systemd/system)"
fi
wheel=$(cd "$(dirname "$wheel")" && pwd)/$(basename "$wheel")

# The environment. The unit names its interpreter's version in the launcher's path, so an
# environment of another Python is not upgraded in place: a new Python is a new environment
# (and a new approval).
wanted=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])') ||
    fail "no interpreter $python (apt-get install python3-venv)"
if [[ -e $prefix/bin/python ]]; then
    have=$("$prefix/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' || true)
    [[ $have == "$wanted" ]] ||
        fail "$prefix is an environment of Python ${have:-(broken)}, not $wanted: move it away first"
    again=yes
else
    "$python" -m venv "$prefix"
    again=no
fi
# --no-compile: the service never reads bytecode caches (docs/operations.md, "No bytecode
# cache"). Into an environment that was there, the second install puts the wheel's files back
# even when its version is the one installed (a rebuild, a repair); the first brings the
# dependencies it needs.
pip=("$prefix/bin/python" -m pip install --quiet --disable-pip-version-check --no-compile)
"${pip[@]}" "$wheel"
if [[ $again == yes ]]; then
    "${pip[@]}" --force-reinstall --no-deps "$wheel"
fi
site=$("$prefix/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
[[ -f $site/controller/__main__.py ]] || fail "the wheel installed no controller/__main__.py in $site"

# The documentation, where the alerts' runbook links point (docs/operations.md, "Alerts").
docs=$prefix/share/doc/jackpotd
rm -rf "$docs"
install -d -m 0755 "$docs"
cp -R "$source_tree/docs/." "$docs/"
chmod -R u=rwX,go=rX "$docs"

# The units, naming this environment (the shipped ones name /opt/jackpotd and Python 3.11's
# install folder).
units=$root/etc/systemd/system
install -d -m 0755 "$units" "$root/usr/lib/sysusers.d" "$root/usr/lib/tmpfiles.d"
for unit in "$source_tree"/systemd/*.service; do
    sed -e "s#/opt/jackpotd/lib/python3\.11/site-packages#${site}#g" \
        -e "s#/opt/jackpotd#${prefix}#g" "$unit" >"$units/.$(basename "$unit").new"
    chmod 0644 "$units/.$(basename "$unit").new"
    mv -f "$units/.$(basename "$unit").new" "$units/$(basename "$unit")"
done
install -m 0644 "$source_tree/systemd/jackpotd.sysusers" "$root/usr/lib/sysusers.d/jackpotd.conf"
install -m 0644 "$source_tree/systemd/jackpotd.tmpfiles" "$root/usr/lib/tmpfiles.d/jackpotd.conf"

# The users, then the folders they own.
install -d -m 0755 "$root/etc"
systemd-sysusers --root="$root" jackpotd.conf
systemd-tmpfiles --root="$root" --create jackpotd.conf
if [[ $root == / && -d /run/systemd/system ]]; then
    systemctl daemon-reload
else
    echo "systemd not reloaded (JACKPOTD_ROOT=$root, or systemd is not running)"
fi

# Without writing bytecode caches into the environment (the service would not read them).
echo "installed $(PYTHONDONTWRITEBYTECODE=1 "$prefix/bin/jackpotd" --version) in $prefix; units in $units"
echo "next: configure /etc/jackpotd/jackpotd.toml, approve the software, then" \
    "systemctl enable --now jackpotd (docs/operations.md sections 2, 3 and 5)"
