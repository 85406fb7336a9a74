#!/bin/sh
# Make the wide-area lab in DIR (deploy/wide-area/README.md, "The lab"): the configurations,
# the credentials of central's broker, and the three controller keys, exchanged.
#
#   deploy/wide-area/lab/make-lab.sh [DIR]        (default /var/lib/jackpotd-wide-area-lab)
#
# Writes, the secrets readable by their owner only:
#   DIR/central/jackpotd.toml, mosquitto.conf, acl     central's controller and broker
#   DIR/atlantic/jackpotd.toml, DIR/boardwalk/...      each property's controller
#   DIR/floor/mosquitto.conf                           the properties' own (floor) broker
#   DIR/secrets/                                       deploy/mosquitto/make-secrets.sh's: the
#                                                      CA, central's broker certificate for
#                                                      127.0.0.1, a certificate and a password
#                                                      for central's controller (jackpotd-in,
#                                                      jackpotd-out) and each property
#                                                      (site-atlantic, site-boardwalk)
#   DIR/NAME/controller.key, controller.pub            each controller's key (jackpotd key
#                                                      generate), NAME central, atlantic, boardwalk
#   DIR/central/sites/SITE.pub                         each property's public key, at central
#   DIR/SITE/central.pub                               central's public key, at each property
# The mosquitto files get DIR in place of /var/lib/jackpotd-wide-area-lab, and `user` the
# user running this script (the brokers then read the secrets it made). Running it again keeps
# every key and credential that exists (a controller key is never replaced: its journal's
# checkpoints are signed with it) and installs the configurations again.
#
# Environment: JACKPOTD, the jackpotd command (default: jackpotd on PATH); MOSQUITTO_PASSWD, as
# make-secrets.sh takes it.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-/var/lib/jackpotd-wide-area-lab}
jackpotd=${JACKPOTD:-jackpotd}
shipped=/var/lib/jackpotd-wide-area-lab
sites="atlantic boardwalk"

umask 077
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
for name in central floor $sites; do
    mkdir -p "$dir/$name"
done
mkdir -p "$dir/central/sites" "$dir/central/mosquitto" "$dir/floor/mosquitto"

# The configurations, the mosquitto files pointed at DIR and run as this user.
for name in central $sites; do
    cp "$here/$name/jackpotd.toml" "$dir/$name/jackpotd.toml"
done
cp "$here/central/acl" "$dir/central/acl"
for name in central floor; do
    sed -e "s#$shipped#$dir#g" -e "s#^user .*#user $(id -un)#" \
        "$here/$name/mosquitto.conf" >"$dir/$name/mosquitto.conf"
done

# Central's broker: the CA, its certificate, and a certificate and password per user. A
# property's user is site-<its site>, as its uplink's client id.
users=""
for site in $sites; do
    users="$users site-$site"
done
# shellcheck disable=SC2086 # one argument per user
SERVER_NAMES="localhost 127.0.0.1" ACL="$dir/central/acl" \
    /bin/sh "$here/../../mosquitto/make-secrets.sh" "$dir/secrets" $users

# The controller keys, and their public halves exchanged as an operator exchanges them.
for name in central $sites; do
    if [ ! -f "$dir/$name/controller.key" ]; then
        rm -f "$dir/$name/controller.pub"
        "$jackpotd" key generate --out "$dir/$name/controller.key" \
            --public-out "$dir/$name/controller.pub" >/dev/null
        echo "made the controller key of $name: $dir/$name/controller.key"
    fi
done
for site in $sites; do
    cp "$dir/$site/controller.pub" "$dir/central/sites/$site.pub"
    cp "$dir/central/controller.pub" "$dir/$site/central.pub"
done

echo
echo "the public keys:"
echo "  central:   $dir/central/controller.pub, at each property as $dir/SITE/central.pub"
for site in $sites; do
    echo "  $site: $dir/$site/controller.pub, at central as $dir/central/sites/$site.pub"
done
echo "central's broker: 127.0.0.1:8893 (TLS), CA $dir/secrets/ca.crt"
echo "next: approve each configuration (README.md, \"The lab\"), then start the lab"
