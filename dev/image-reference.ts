// node dev/image-reference.ts
// Prints the haptic image reference the chart's defaults name (`<image.repository>:<tag>`,
// the tag being the chart's appVersion), for image/build.sh.
import { readChartImage } from './lib/chart-image.ts';

process.stdout.write(`${readChartImage().reference}\n`);
