import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';
import { createPinoLogger, JsonLogger } from './common/logging/json-logger.js';
import { logDestination } from './common/logging/pretty-stream.js';
import { applyHeapGrowth } from './config/heap-growth.js';
import { ConfigError, loadConfig } from './config/load-config.js';
import { configureApp, createHttpAdapter } from './http/configure-app.js';
import { startTracing } from './tracing/start-tracing.js';

async function bootstrap(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78);
    }
    throw error;
  }
  applyHeapGrowth(config.heapGrowingPercent);
  const pinoLogger = createPinoLogger(config.logLevel, logDestination(config.logFormat));
  await startTracing(config.tracing);
  const app = await NestFactory.create(AppModule.forRoot(config), await createHttpAdapter(config), {
    bodyParser: false,
    logger: new JsonLogger(pinoLogger),
  });
  configureApp(app, config, pinoLogger);
  await app.listen(config.port, config.host);
  pinoLogger.info(
    { port: config.port, host: config.host, database: config.database.kind, httpAdapter: config.httpAdapter, tracing: config.tracing.exporter },
    'Toolgate is listening',
  );
}

bootstrap().catch((error: unknown) => {
  process.stderr.write(`Toolgate failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
