/** The lowest supported Node.js major version, from package.json's engines.node. */
export function minimumNodeMajor(): number;
/** Undefined when `version` ("v24.21.0") is supported, else the message fns prints before exiting 2. */
export function unsupportedNode(version: string): string | undefined;
