/** Chart rendering: `helm template` of the embedded chart → typed objects. */
export { type ChartMetadata, readChartMetadata } from './chart-metadata.ts';
export { embeddedChartDir } from './chart-dir.ts';
export { readChartYaml } from './chart-yaml.ts';
export { type HelmFailure, describeHelmFailure } from './helm-failure.ts';
export {
  type HookInfo,
  type RenderedMetadata,
  type RenderedObject,
  parseManifest,
} from './manifest.ts';
export { type RenderChartOptions, type RenderedChart, renderChart } from './render-chart.ts';
export { loadValuesSchemaCheck } from './values-schema-cache.ts';
