/** The controller's metrics as Prometheus text, read from a Pod's :9090/metrics. */

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const sampleLine = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/;
const labelPair = /([A-Za-z_]\w*)="((?:[^"\\]|\\.)*)"/g;

/** The samples of an exposition text (comments and blank lines skipped). */
export function parsePrometheusText(text: string): Sample[] {
  return text.split('\n').flatMap((line) => {
    const match = sampleLine.exec(line);
    if (match === null) return [];
    const [, name = '', labels = '', value = ''] = match;
    return [
      {
        name,
        labels: Object.fromEntries(
          [...labels.matchAll(labelPair)].map(([, key = '', text = '']) => [
            key,
            text.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c)),
          ]),
        ),
        value: Number(value),
      },
    ];
  });
}

/** GET http://<address>:9090/metrics. */
export async function scrapeMetrics(address: string): Promise<Sample[]> {
  const response = await fetch(`http://${address}:9090/metrics`);
  if (!response.ok) throw new Error(`metrics of ${address}: HTTP ${String(response.status)}`);
  return parsePrometheusText(await response.text());
}

/** The sum of the samples named `name` whose labels pass `where`. */
export function total(
  samples: readonly Sample[],
  name: string,
  where: (labels: Readonly<Record<string, string>>) => boolean = () => true,
): number {
  return samples
    .filter((sample) => sample.name === name && where(sample.labels))
    .reduce((sum, sample) => sum + sample.value, 0);
}
