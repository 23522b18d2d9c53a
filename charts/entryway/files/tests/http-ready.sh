# helm test: succeeds when $URL answers 200. curl retries while the answer is transient (no
# connection yet, a timeout, 503 while a replica starts or a NetworkPolicy is still being
# programmed); any other answer fails at once. POSIX sh: runs in the test image's busybox.
set -u
code=$(curl --silent --show-error --max-time 5 --retry "${RETRIES:-10}" --retry-delay 3 --retry-connrefused \
  --output /dev/null --write-out '%{http_code}' "$URL") || true
if [ "$code" = 200 ]; then
  echo "ready: $URL answered 200"
  exit 0
fi
echo "not ready: $URL answered ${code:-nothing} (expected 200)" >&2
exit 1
