#!/bin/sh
# The README's session with curl, run against a running `herald dev`: it makes an
# organization, a project, configurations and a webhook integration, reports a host down and
# back, acknowledges the alert and prints what was recorded. It captures every id itself.
#
#   HERALD_KEY=PUB:PRIV sh examples/quickstart.sh
#
# HERALD_KEY is the key herald dev printed; HERALD_LISTEN the address it listens on (as for
# herald dev; default 127.0.0.1:8080). With HERALD_RECEIVER set to a URL that answers POST
# with a 2xx, the alert's notices go there as webhooks signed with the secret "s3cret".
set -eu

: "${HERALD_KEY:?set HERALD_KEY=public:private, the key herald dev printed}"
listen=${HERALD_LISTEN:-127.0.0.1:8080}
case $listen in
:*) listen=127.0.0.1$listen ;;
0.0.0.0:*) listen=127.0.0.1:${listen#0.0.0.0:} ;;
esac
B=http://$listen/api/public/v1.0

# api calls the API with the key; id prints the first id of the answer on its input.
api() { curl -sS --fail-with-body --digest -u "$HERALD_KEY" -H Content-Type:application/json "$@"; }
id() { grep -o '"id":"[0-9a-f]\{24\}"' | head -n 1 | cut -d '"' -f 4; }
step() { printf '\n== %s\n' "$*"; }

step "Without credentials: 401 and a Digest challenge"
curl -sS -o /dev/null -w '%{http_code}\n' "$B/globalAlerts"

step "An organization and a project in it, with the default alert configurations"
name=acme-$$
ORG=$(api -d "{\"name\":\"$name\"}" "$B/orgs" | id)
GROUP=$(api -d "{\"name\":\"prod\",\"orgId\":\"$ORG\",\"tags\":[\"prod\"]}" "$B/groups" | id)
echo "organization $ORG, project $GROUP"
api "$B/groups/$GROUP/alertConfigs?itemsPerPage=2&pretty=true"
api "$B/groups?pretty=true&itemsPerPage=1"

step "An alert configuration that pages, and a webhook integration (secrets come back masked)"
api -d '{"eventTypeName":"NO_PRIMARY","enabled":true,
  "notifications":[{"typeName":"PAGING","serviceKey":"0123456789abcdef","delayMin":0,"intervalMin":5}]}' \
  "$B/groups/$GROUP/alertConfigs?pretty=true"
api -X PUT -d '{"type":"WEBHOOK","url":"https://hooks.example.com/h/abc","secret":"s3cret"}' \
  "$B/groups/$GROUP/integrations/WEBHOOK?pretty=true"

step "A maintenance window, and what was recorded"
api -d '{"alertTypeNames":["HOST"],"startDate":"2030-01-01T00:00:00Z","endDate":"2030-01-01T02:00:00Z"}' \
  "$B/groups/$GROUP/maintenanceWindows?pretty=true"
api "$B/groups/$GROUP/events?pretty=true&itemsPerPage=5"

step "Observations from an agent: registers the host and its disks"
api -d '[{"eventTypeName":"HOST_DOWN","active":false,"hostId":"h1","hostnameAndPort":"db1:27017",
  "disks":[{"partitionName":"data"}]}]' "$B/groups/$GROUP/observations"
echo
api "$B/groups/$GROUP/hosts/h1/disks/data?pretty=true"

step "A key with only the roles it needs; its private key is shown once"
api -d '{"desc":"ci","roles":["ORG_MEMBER"]}' "$B/orgs/$ORG/apiKeys?pretty=true"

if [ -n "${HERALD_RECEIVER:-}" ]; then
	step "A configuration that calls $HERALD_RECEIVER at once, then every 5 minutes"
	CONFIG=$(api -d "{\"eventTypeName\":\"HOST_DOWN\",\"enabled\":true,\"notifications\":[{\"typeName\":\"WEBHOOK\",
  \"webhookUrl\":\"$HERALD_RECEIVER\",\"webhookSecret\":\"s3cret\",\"delayMin\":0,\"intervalMin\":5}]}" \
		"$B/groups/$GROUP/alertConfigs" | id)
	echo "configuration $CONFIG"
fi

step "The agent reports db1 down: the alert opens"
api -d '[{"eventTypeName":"HOST_DOWN","active":true,"hostId":"h1","hostnameAndPort":"db1:27017"}]' \
	"$B/groups/$GROUP/observations"
echo
ALERT=""
tries=0
while [ -z "$ALERT" ]; do
	ALERT=$(api "$B/groups/$GROUP/alerts?status=OPEN" | id)
	tries=$((tries + 1))
	if [ -z "$ALERT" ]; then
		[ "$tries" -lt 50 ] || { echo "no alert opened" >&2; exit 1; }
		sleep 0.2
	fi
done
echo "alert $ALERT"

step "Acknowledge it: no more repeats until acknowledgedUntil"
api -X PATCH -d '{"acknowledgedUntil":"2030-01-01T00:00:00Z","acknowledgementComment":"db1 is being replaced"}' \
	"$B/groups/$GROUP/alerts/$ALERT?pretty=true"

step "db1 is back: the alert closes; a resolution notice goes out even while acknowledged"
api -d '[{"eventTypeName":"HOST_DOWN","active":false,"hostId":"h1","hostnameAndPort":"db1:27017"}]' \
	"$B/groups/$GROUP/observations"
echo
status=""
tries=0
while [ "$status" != CLOSED ]; do
	status=$(api "$B/groups/$GROUP/alerts/$ALERT" | grep -o '"status":"[A-Z]*"' | cut -d '"' -f 4)
	tries=$((tries + 1))
	[ "$tries" -lt 50 ] || { echo "the alert did not close" >&2; exit 1; }
	[ "$status" = CLOSED ] || sleep 0.2
done
api "$B/groups/$GROUP/alerts/$ALERT?pretty=true"
api "$B/groups/$GROUP/alerts/$ALERT/deliveries?pretty=true"
api "$B/groups/$GROUP/events?itemsPerPage=3&pretty=true"
step "Done: organization $ORG, project $GROUP, alert $ALERT"
