/**
 * The shell of agent-certificates.txt, "Supply external identities" and "Rotate a certificate
 * authority", as the spec prints it (line continuations restored). One substitution only: the
 * spec's namespace `haptic` becomes the test's namespace (the release keeps the name haptic).
 */

/** "Supply external identities", step 2: "Create the two identity Secrets." (in the files' directory) */
export const createSecretsStep = String.raw`
kubectl create secret generic haptic-agent-identity -n haptic \
  --type=kubernetes.io/tls \
  --from-file=tls.crt=agent.crt --from-file=tls.key=agent.key \
  --from-file=ca.crt=ca.crt
kubectl create secret generic haptic-controller-identity -n haptic \
  --type=kubernetes.io/tls \
  --from-file=tls.crt=controller.crt --from-file=tls.key=controller.key \
  --from-file=ca.crt=ca.crt
`;

/** "Identify the installed Secrets and required peer names." */
export const identifyStep = String.raw`
set -euo pipefail
umask 077
rotation_dir=$(mktemp -d)
server_secret=$(kubectl get deployment haptic-haproxy -n haptic -o json |
  jq -r '.spec.template.spec.volumes[] | select(.name == "agent-tls").secret.secretName')
client_secret=$(kubectl get deployment haptic-controller -n haptic -o json |
  jq -r '.spec.template.spec.volumes[] | select(.name == "agent-tls").secret.secretName')
agent_name=$(kubectl get deployment haptic-controller -n haptic -o json |
  jq -r '.spec.template.spec.containers[] | select(.name == "controller").env[] | select(.name == "AGENT_TLS_SERVER_NAME").value')
controller_name=$(kubectl get deployment haptic-haproxy -n haptic -o json |
  jq -r '.spec.template.spec.initContainers[] | select(.name == "agent").args[] | select(startswith("--tls-client-name=")) | ltrimstr("--tls-client-name=")')
test -n "$server_secret" && test -n "$client_secret"
test -n "$agent_name" && test -n "$controller_name"
`;

/** "Generate a new CA and role-specific identities." */
export const generateStep = String.raw`
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
  -keyout "$rotation_dir/ca.key" -out "$rotation_dir/ca.crt" -days 365 \
  -subj /CN=haptic-agent-ca \
  -addext 'basicConstraints=critical,CA:TRUE' \
  -addext 'keyUsage=critical,keyCertSign,cRLSign'
for role in agent controller; do
  name=$agent_name usage=serverAuth
  if [ "$role" = controller ]; then name=$controller_name; usage=clientAuth; fi
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$rotation_dir/$role.key" -out "$rotation_dir/$role.csr" \
    -subj "/CN=$name"
  printf 'subjectAltName=DNS:%s\nextendedKeyUsage=%s\nkeyUsage=critical,digitalSignature\nbasicConstraints=critical,CA:FALSE\n' \
    "$name" "$usage" > "$rotation_dir/$role.ext"
  openssl x509 -req -in "$rotation_dir/$role.csr" \
    -CA "$rotation_dir/ca.crt" -CAkey "$rotation_dir/ca.key" \
    -set_serial "0x$(openssl rand -hex 16)" -days 365 \
    -extfile "$rotation_dir/$role.ext" -out "$rotation_dir/$role.crt"
done
`;

/** "Add the new CA while retaining each peer's previous trust with a deadline." */
export const distributeTrustStep = String.raw`
deadline=$(python3 -c 'from datetime import datetime,timedelta,timezone; print((datetime.now(timezone.utc)+timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"))')
for secret in "$server_secret" "$client_secret"; do
  kubectl get secret "$secret" -n haptic -o json | jq -e '.data["previous-ca.crt"] == null' >/dev/null
  kubectl get secret "$secret" -n haptic -o jsonpath='{.data.ca\.crt}' | base64 -d > "$rotation_dir/$secret-old-ca.crt"
  jq -n --rawfile ca "$rotation_dir/ca.crt" \
    --rawfile previous "$rotation_dir/$secret-old-ca.crt" --arg until "$deadline" \
    '{data:{"ca.crt":($ca|@base64),"previous-ca.crt":($previous|@base64),"previous-ca-until":($until|@base64)}}' |
    kubectl patch secret "$secret" -n haptic --type=merge --patch-file=/dev/stdin
done
`;

/** "Wait for both sides to receive the trust bundle." */
export const waitForTrustStep = String.raw`
wait_projected loadbalancer agent ca.crt "$rotation_dir/ca.crt"
wait_projected controller controller ca.crt "$rotation_dir/ca.crt"
`;

/** "Update each certificate and key together." */
export const replaceIdentitiesStep = String.raw`
for role in agent controller; do
  secret=$server_secret
  [ "$role" != controller ] || secret=$client_secret
  jq -n --rawfile cert "$rotation_dir/$role.crt" --rawfile key "$rotation_dir/$role.key" \
    '{data:{"tls.crt":($cert|@base64),"tls.key":($key|@base64)}}' |
    kubectl patch secret "$secret" -n haptic --type=merge --patch-file=/dev/stdin
done
`;

/** "Wait for every replica to receive its new identity." */
export const waitForIdentitiesStep = String.raw`
wait_projected loadbalancer agent tls.crt "$rotation_dir/agent.crt"
wait_projected controller controller tls.crt "$rotation_dir/controller.crt"
`;

/** "Remove the previous CA and deadline from both Secrets." */
export const revokeStep = String.raw`
for secret in "$server_secret" "$client_secret"; do
  kubectl patch secret "$secret" -n haptic --type=merge \
    -p '{"data":{"previous-ca.crt":null,"previous-ca-until":null}}'
done
wait_projected loadbalancer agent previous-ca.crt absent
wait_projected controller controller previous-ca.crt absent
`;

/**
 * "Define a check for the projected files on every replica." Each call lists the component's
 * Pods and reads the file through `kubectl exec` in the named container, every 2 seconds for
 * at most 180.
 */
export const waitProjectedFunction = String.raw`
wait_projected() {
  local component=$1 container=$2 file=$3 expected=$4
  local deadline=$((SECONDS + 180)) pods pod ready
  while [ "$SECONDS" -lt "$deadline" ]; do
    pods=$(kubectl get pods -n haptic \
      -l "app.kubernetes.io/instance=haptic,app.kubernetes.io/component=$component" \
      -o json | jq -r '.items[] | select(.metadata.deletionTimestamp == null).metadata.name')
    ready=true
    [ -n "$pods" ] || ready=false
    for pod in $pods; do
      if [ "$expected" = absent ]; then
        kubectl exec -n haptic "$pod" -c "$container" -- \
          test ! -e "/etc/haptic/agent-tls/..data/$file" || ready=false
      elif ! kubectl exec -n haptic "$pod" -c "$container" -- \
        cat "/etc/haptic/agent-tls/..data/$file" | cmp -s "$expected" -; then
        ready=false
      fi
    done
    [ "$ready" = true ] && return 0
    sleep 2
  done
  echo "TLS files haven't reached every $component replica; repair projection before continuing" >&2
  return 1
}
`;

/** A spec step for namespace `namespace`. */
export function inNamespace(step: string, namespace: string): string {
  return step.replaceAll(' -n haptic', ` -n ${namespace}`);
}
