#!/bin/sh
# A warehouse reporting a return's progress to `claims serve` (docs/returns.md): the carrier's first scan, the
# delivery, the inspection. Each event carries its own event_id, so sending the script twice changes nothing.
#   CLAIMS_API_TOKEN=… examples/returns/post-return-events.sh <claim_id> [inspected_ok|inspected_failed]
# CLAIMS_API (default http://127.0.0.1:3000) names another stack.
set -eu
claim="${1:?usage: post-return-events.sh <claim_id> [inspected_ok|inspected_failed]}"
inspection="${2:-inspected_ok}"
api="${CLAIMS_API:-http://127.0.0.1:3000}"
parcel="00340434161094042557"

post() {
  curl -sS -X POST "$api/claims/$claim/return-events" \
    -H "Authorization: Bearer ${CLAIMS_API_TOKEN:?set CLAIMS_API_TOKEN}" -H 'content-type: application/json' \
    -d "{\"event_id\":\"$parcel-$1\",\"event\":\"$1\",\"at\":\"$2\",\"carrier_ref\":\"$parcel\"}"
  echo
}

post in_transit "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
post delivered "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
post "$inspection" "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
