/** The directory of the node `make node-up` starts: $HAPTIC_NODE_DIR, or /var/lib/haptic-node. */
export const nodeDir = process.env.HAPTIC_NODE_DIR ?? '/var/lib/haptic-node';
