# syntax=docker/dockerfile:1
# The haptic image for those who build with Docker:
#   docker build --build-arg SOURCE_DATE_EPOCH=$(git log -1 --format=%ct) -t localhost/haptic:<appVersion> .
# The layers come from image/assemble.sh, the script `make image` runs too (image/README.md), and
# the configuration below is the one image/build.sh gives the OCI archive (a test compares them).
# mmdebstrap needs root but no CAP_SYS_ADMIN, so a plain `docker build` can run it.

# Go builds the pinned helm (tools/helm3) and the check sandbox's haptic-no-network
# (tools/no-network), as dev/install-tools.sh does everywhere else; dev/install-haproxy.sh
# fetches the pinned haproxy .deb of Debian trixie (tools/haproxy/debian-version).
FROM docker.io/library/golang:1.26-bookworm AS assemble
RUN apt-get update \
  && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends mmdebstrap npm patchelf \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
ARG SOURCE_DATE_EPOCH
ENV PATH=/src/.tools/bin:/src/node_modules/.bin:$PATH
RUN dev/install-node.sh \
  && dev/install-tools.sh helm haptic-no-network \
  && dev/install-haproxy.sh \
  && npm ci --no-audit --no-fund \
  && image/assemble.sh /layers

FROM scratch
COPY --from=assemble /layers/base/ /
COPY --from=assemble /layers/runtime/ /
COPY --from=assemble /layers/app/ /
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
ENV NODE_ENV=production
WORKDIR /
LABEL org.opencontainers.image.title=haptic
LABEL org.opencontainers.image.licenses=Apache-2.0
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/haptic"]
