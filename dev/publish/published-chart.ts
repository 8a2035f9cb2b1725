/**
 * What `make publish` changes in the chart it pushes: the default image becomes the pushed one,
 * by repository and digest (pure; dev/publish.ts does the I/O). Comments and layout of
 * values.yaml stay as they are, so the published chart reads like the checkout's.
 */
import { isMap, parseDocument } from 'yaml';

/** A registry location: `host[:port][/path]`, lower case, no scheme, no trailing slash. */
const registryPattern =
  /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*(?::[0-9]{1,5})?(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/;
const digestPattern = /^sha256:[a-f0-9]{64}$/;

/** Checks a `--registry` value; the message says what is wrong and what is expected. */
export function registryProblem(registry: string): string | undefined {
  if (registry === '') {
    return 'REGISTRY is empty: name the registry and path to publish to, e.g. REGISTRY=registry.example.com/team.';
  }
  if (/^[a-z]+:\/\//i.test(registry)) {
    return `REGISTRY=${registry} has a scheme: give host[:port][/path] without it, e.g. registry.example.com/team (oci:// and https:// are implied).`;
  }
  if (!registryPattern.test(registry)) {
    return `REGISTRY=${registry} is not host[:port][/path] in lower case (path parts of a-z, 0-9, '.', '_' and '-', no trailing '/'), e.g. registry.example.com/team.`;
  }
  return undefined;
}

/** Where `make publish` puts image and chart under `registry`. */
export interface PublishedLocations {
  /** `<registry>/haptic`: the image repository, tagged with the version. */
  readonly imageRepository: string;
  /** `oci://<registry>/charts`: where `helm push` puts the chart. */
  readonly chartRepository: string;
  /** `oci://<registry>/charts/haptic`: what `helm install` takes. */
  readonly chartReference: string;
}

export function publishedLocations(registry: string): PublishedLocations {
  return {
    imageRepository: `${registry}/haptic`,
    chartRepository: `oci://${registry}/charts`,
    chartReference: `oci://${registry}/charts/haptic`,
  };
}

/** values.yaml with `image.repository` and `image.digest` set, everything else untouched. */
export function publishedValues(valuesYaml: string, repository: string, digest: string): string {
  if (!digestPattern.test(digest)) {
    throw new Error(`The pushed image's digest '${digest}' is not sha256:<64 hex digits>.`);
  }
  const document = parseDocument(valuesYaml);
  if (!isMap(document.get('image'))) {
    throw new Error(`values.yaml has no image map to point at ${repository}; restore the chart.`);
  }
  document.setIn(['image', 'repository'], repository);
  document.setIn(['image', 'digest'], digest);
  return document.toString({ lineWidth: 0 });
}

/** values.schema.json with the same two defaults, so the schema documents what the chart does. */
export function publishedSchema(schemaJson: string, repository: string, digest: string): string {
  const schema = JSON.parse(schemaJson) as {
    properties?: { image?: { properties?: Record<string, { default?: unknown }> } };
  };
  const image = schema.properties?.image?.properties;
  if (image?.repository === undefined || image.digest === undefined) {
    throw new Error(
      'values.schema.json has no image.repository and image.digest; restore the chart.',
    );
  }
  image.repository.default = repository;
  image.digest.default = digest;
  return `${JSON.stringify(schema, null, 2)}\n`;
}
