SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
# Every target uses the project's own Node (>= 22) and the pinned tools first.
export PATH := $(CURDIR)/.tools/bin:$(CURDIR)/node_modules/.bin:$(PATH)

.PHONY: setup tools build lint typecheck test test-unit test-integration demo cluster-up cluster-down clean

setup: tools node_modules/.installed

tools:
	dev/install-node.sh
	dev/install-system-packages.sh
	dev/install-tools.sh
	dev/install-checkov.sh
	dev/install-haproxy.sh

node_modules/.installed: package-lock.json | tools
	npm ci --no-audit --no-fund
	touch $@

# Type-checks the product's sources, then bundles them into dist/ (dev/build-dist.ts).
build: setup
	tsc -p tsconfig.build.json
	node dev/build-dist.ts

lint: setup
	eslint .
	prettier --check .

typecheck: setup
	tsc -p tsconfig.json

# A test run's fixtures go to a temporary directory of its own, removed when the run ends.
# Open to every user like /tmp (sandbox tests run HAProxy as other users inside it).
run_tmpdir = tmp=$$(mktemp -d -t haptic-test-XXXXXX); trap 'rm -rf "$$tmp"' EXIT; chmod 1777 "$$tmp"; export TMPDIR=$$tmp;

test-unit: setup
	$(run_tmpdir) vitest run --project unit

# Integration tests run under the egress guard: the run fails if anything it started sent a
# packet off this machine (dev/egress-guard.ts). The image is built first: its build reaches
# the package registries, which the guard forbids. Both projects start a node (one per
# machine), so they run one after the other.
test-integration: build image
	$(run_tmpdir) \
	node dev/egress-guard.ts -- vitest run --project integration && \
	node dev/egress-guard.ts -- vitest run --project node

## All set-up, then lint, typecheck, the image, unit and integration tests (under the egress guard).
test: build lint typecheck image
	$(run_tmpdir) \
	node dev/egress-guard.ts -- vitest run --project unit --project integration && \
	node dev/egress-guard.ts -- vitest run --project node

## The product's image without Docker: .image/haptic-<appVersion>.oci.tar (OCI archive, named
## localhost/haptic:<appVersion>), reproducible from the same inputs (image/README.md).
.PHONY: image
image: setup
	image/build.sh

## Publishes the image and the chart to an OCI registry of yours (dev/publish.ts):
## <REGISTRY>/haptic:<version> and oci://<REGISTRY>/charts/haptic, whose default image is that
## push pinned by digest. PLAIN_HTTP=1 for a registry without TLS.
REGISTRY ?=
PLAIN_HTTP ?=
.PHONY: publish
publish: image
	node dev/publish.ts --registry "$(REGISTRY)" $(if $(PLAIN_HTTP),--plain-http)

## The GitOps lifecycle suite (dev/gitops/lifecycle.ts) on a real node, under the egress guard:
## install, repeat sync, upgrade, rejection and forward recovery of four synthetic chart versions
## through a real GitOps engine (GITOPS_PROVIDER=flux: source-controller + helm-controller),
## charts and images from a real OCI registry. result.json goes to .gitops/<provider>-<certificates>/.
GITOPS_PROVIDER ?=
GITOPS_CERTIFICATES ?= external
.PHONY: test-gitops-lifecycle
test-gitops-lifecycle: build image
	GITOPS_PROVIDER=$(GITOPS_PROVIDER) GITOPS_CERTIFICATES=$(GITOPS_CERTIFICATES) \
	  node dev/egress-guard.ts -- node dev/gitops/lifecycle.ts

## The main job, on the real node: helm install with the local image and a registered webhook,
## a sample backend Deployment + Service + TLS Ingress, answers through both HAProxy Pods.
## Ctrl-C stops everything.
demo: build image
	node dev/demo.ts

## A real single-node cluster (etcd, kube-apiserver, controllers, scheduler, containerd, kubelet,
## kube-proxy) in its own network namespace with the product image imported, left running;
## make cluster-down stops it and removes everything it created (dev/lib/local-node.ts).
cluster-up: build image
	node dev/cluster-up.ts

cluster-down:
	node dev/cluster-down.ts

clean:
	rm -rf dist .demo .image .gitops
