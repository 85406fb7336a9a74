#!/bin/sh
# Make the broker's and the clients' credentials: a CA, the broker's certificate, a client
# certificate and a password per user, and mosquitto's password file (README.md, "Credentials").
#
#   deploy/mosquitto/make-secrets.sh DIR [TABLE...]      (default tables: t1)
#
# Users: jackpotd-in and jackpotd-out (the controller's two connections: the broker names each
# session after its user), sign, monitor and one per table, named as the table id.
# Certificates: one per client machine: jackpotd (the controller, for both of its users), sign,
# monitor and each table.
# Writes, all readable by the owner only:
#   DIR/ca.crt, DIR/ca.key                  the CA (keep ca.key offline in production)
#   DIR/broker/server.crt, server.key       the broker's certificate, for SERVER_NAMES
#   DIR/broker/passwd                       mosquitto's password file (hashed), every user
#   DIR/clients/CLIENT.crt, CLIENT.key      each client's certificate
#   DIR/passwords/USER                      each user's password, in clear text
#   DIR/controller.key                      the controller's checkpoint signing key (Ed25519,
#                                           PEM; docs/journal.md, "Checkpoints and anchors")
# Running it again keeps what exists (CA, certificates, passwords), makes what is missing (a new
# table's), and writes the password file again. Delete DIR/passwords/USER and run it again to
# give USER a new password; delete DIR/clients/CLIENT.* to give it a new certificate.
#
# Environment: SERVER_NAMES, the broker's DNS names and IP addresses (default
# "broker localhost 127.0.0.1"); DAYS, the certificates' validity (default 825);
# MOSQUITTO_PASSWD, the mosquitto_passwd command (default mosquitto_passwd); ACL, the ACL whose
# table blocks are checked (default: the acl beside this script).
set -eu

if [ $# -lt 1 ]; then
    echo "usage: $0 DIR [TABLE...]" >&2
    exit 2
fi
dir=$1
shift
tables=${*:-t1}
for table in $tables; do
    case $table in
        jackpotd | jackpotd-in | jackpotd-out | sign | monitor)
            # Its user would be the controller's, a sign's or a monitor's (acl, "Users").
            echo "$0: a table cannot be called $table: that is the name of another user" >&2
            exit 2
            ;;
    esac
done
server_names=${SERVER_NAMES:-broker localhost 127.0.0.1}
days=${DAYS:-825}
passwd_command=${MOSQUITTO_PASSWD:-mosquitto_passwd}
acl=${ACL:-$(dirname "$0")/acl}

umask 077
mkdir -p "$dir/broker" "$dir/clients" "$dir/passwords"
extensions=$(mktemp)
trap 'rm -f "$extensions"' EXIT

# A P-256 key and a certificate signing request for CN=$2 into $1.key / $1.csr.
request() {
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -keyout "$1.key" -out "$1.csr" -subj "/CN=$2" 2>/dev/null
}

# Sign $1.csr with the CA, with the extensions in $extensions, into $1.crt.
sign() {
    openssl x509 -req -in "$1.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
        -days "$days" -sha256 -extfile "$extensions" -out "$1.crt" 2>/dev/null
    rm -f "$1.csr"
}

if [ ! -f "$dir/ca.key" ]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -keyout "$dir/ca.key" -out "$dir/ca.crt" -days 3650 -sha256 -subj "/CN=jackpotd MQTT CA" \
        -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
    echo "made the CA: $dir/ca.crt"
fi

if [ ! -f "$dir/broker/server.crt" ]; then
    alt=""
    for name in $server_names; do
        case $name in
            *[!0-9.]*) entry="DNS:$name" ;;
            *) entry="IP:$name" ;;
        esac
        alt="${alt:+$alt,}$entry"
    done
    first=${server_names%% *}
    {
        echo "basicConstraints=critical,CA:FALSE"
        echo "keyUsage=critical,digitalSignature,keyEncipherment"
        echo "extendedKeyUsage=serverAuth"
        echo "subjectKeyIdentifier=hash"
        echo "authorityKeyIdentifier=keyid,issuer"
        echo "subjectAltName=$alt"
    } >"$extensions"
    request "$dir/broker/server" "$first"
    sign "$dir/broker/server"
    echo "made the broker's certificate for $alt"
fi

{
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=clientAuth"
    echo "subjectKeyIdentifier=hash"
    echo "authorityKeyIdentifier=keyid,issuer"
} >"$extensions"
rm -f "$dir/broker/passwd.new"
touch "$dir/broker/passwd.new"
for client in jackpotd sign monitor $tables; do
    if [ ! -f "$dir/clients/$client.crt" ]; then
        request "$dir/clients/$client" "$client"
        sign "$dir/clients/$client"
        echo "made a client certificate for $client"
    fi
done
for user in jackpotd-in jackpotd-out sign monitor $tables; do
    if [ ! -f "$dir/passwords/$user" ]; then
        openssl rand -hex 24 >"$dir/passwords/$user"
        echo "made a password for $user"
    fi
    $passwd_command -b "$dir/broker/passwd.new" "$user" "$(cat "$dir/passwords/$user")"
done
mv "$dir/broker/passwd.new" "$dir/broker/passwd"
echo "wrote $dir/broker/passwd"
if [ ! -f "$dir/controller.key" ]; then
    openssl genpkey -algorithm ed25519 -out "$dir/controller.key"
    echo "made the controller's signing key"
fi
# Each table reads the controllers' status through a block of its own in the ACL (README.md,
# "Warnings"): name the tables that have none, since the broker cannot.
if [ -f "$acl" ]; then
    for table in $tables; do
        if ! grep -qx "user $table" "$acl"; then
            echo "$0: table $table has no 'user $table' block in $acl: copy the one of 'user t1'" >&2
        fi
    done
fi
