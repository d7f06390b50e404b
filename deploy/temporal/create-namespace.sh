#!/bin/sh
# Registers the namespace Intake uses once the server answers (docker-compose.yml's
# temporal-namespace service). Idempotent. TEMPORAL_ADDRESS, NAMESPACE (default), RETENTION (168h).
set -eu
ADDRESS=${TEMPORAL_ADDRESS:-temporal:7233}
NAMESPACE=${NAMESPACE:-default}
attempt=0
until temporal operator cluster health --address "$ADDRESS" >/dev/null 2>&1; do
  attempt=$((attempt + 1))
  if [ "$attempt" -ge 60 ]; then echo "Temporal at $ADDRESS is not healthy" >&2; exit 1; fi
  sleep 2
done
if temporal operator namespace describe --address "$ADDRESS" -n "$NAMESPACE" >/dev/null 2>&1; then
  echo "namespace $NAMESPACE exists"
else
  temporal operator namespace create --address "$ADDRESS" -n "$NAMESPACE" --retention "${RETENTION:-168h}"
fi
