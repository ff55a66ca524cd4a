// `/metrics` in the Prometheus text format (docs/observability.md): OpenTelemetry's own
// Prometheus exporter (a MetricReader) on a MeterProvider the engine records into, served by
// a node:http listener bound like serve's other endpoints (127.0.0.1 by default). The
// exporter's own server is not used: it cannot report the port it got for port 0.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MeterProvider as MeterProviderApi } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';

export interface MetricsEndpoint {
  /** http://<host>:<port>/metrics */
  readonly url: string;
  close(): Promise<void>;
}

export interface PrometheusMetrics {
  /** Give it to the engine: `createEngine({ telemetry: { meterProvider } })`. */
  readonly meterProvider: MeterProviderApi;
  /** Listens on `host:port` (0: any free port); GET /metrics answers the text format. */
  listen(host: string, port: number): Promise<MetricsEndpoint>;
  shutdown(): Promise<void>;
}

export function prometheusMetrics(): PrometheusMetrics {
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const meterProvider = new MeterProvider({ readers: [exporter] });
  return {
    meterProvider,
    async listen(host, port) {
      const server = createServer((req, res) => {
        const path = (req.url ?? '').split('?')[0];
        if (req.method === 'GET' && path === '/metrics') return exporter.getMetricsRequestHandler(req, res);
        res.statusCode = 404;
        res.end('not found: GET /metrics\n');
      });
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => (server.off('error', reject), resolve()));
      });
      const bound = (server.address() as AddressInfo).port;
      const shown = host.includes(':') ? `[${host}]` : host;
      return {
        url: `http://${shown}:${bound}/metrics`,
        close: () => new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
      };
    },
    shutdown: () => meterProvider.shutdown(),
  };
}
