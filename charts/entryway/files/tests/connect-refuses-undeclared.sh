# helm test: a CONNECT through the gateway to $TARGET, which no workspace declares, must be refused
# with 404 (Envoy's route_not_found), never tunnelled: a gateway that tunnels it is an open proxy.
# $PROXY is the gateway (http://host:port, or https://host:port with TLS on the CONNECT hop);
# $PROXY_RESOLVE (host:port:address) makes curl reach a TLS gateway by the Gateway's host name,
# which it must send as SNI, at the Service's address; $EXPECT lists the accepted statuses.
# curl's %{http_connect} is the status of the proxy's answer to its CONNECT.
# POSIX sh: runs in the test image's busybox.
set -u
code=$(curl --silent --max-time 10 --retry "${RETRIES:-5}" --retry-delay 2 --retry-connrefused \
  --output /dev/null --write-out '%{http_connect}' --proxytunnel --proxy "$PROXY" \
  ${PROXY_RESOLVE:+--resolve "$PROXY_RESOLVE"} ${PROXY_INSECURE:+--proxy-insecure} \
  "http://$TARGET/") || true
for accepted in ${EXPECT:-404}; do
  if [ "$code" = "$accepted" ]; then
    echo "refused: CONNECT $TARGET through $PROXY answered $code"
    exit 0
  fi
done
case "$code" in
  200) echo "OPEN PROXY: CONNECT $TARGET through $PROXY was tunnelled (200)" >&2 ;;
  000 | "") echo "no answer to CONNECT $TARGET from $PROXY" >&2 ;;
  *) echo "CONNECT $TARGET through $PROXY answered $code (expected ${EXPECT:-404})" >&2 ;;
esac
exit 1
