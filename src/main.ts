import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';
import { createPinoLogger, JsonLogger } from './common/logging/json-logger.js';
import { logDestination } from './common/logging/pretty-stream.js';
import { applyHeapGrowth } from './config/heap-growth.js';
import { ConfigError, loadConfig } from './config/load-config.js';
import { configureApp, createHttpAdapter } from './http/configure-app.js';
import { startTracing } from './tracing/start-tracing.js';
import { closeInheritedDescriptors } from './execution/process/inherited-descriptors.js';

async function bootstrap(): Promise<void> {
  // Before anything else runs: no child (a command's sandbox least of all) may inherit them. An IPC
  // channel Node was started with (NODE_CHANNEL_FD) is the service's own.
  const closed = closeInheritedDescriptors(process.env.NODE_CHANNEL_FD ? [Number(process.env.NODE_CHANNEL_FD)] : []);
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
  if (closed.length > 0)
    pinoLogger.info({ descriptors: closed }, 'Closed descriptors inherited from the launcher, so that no command can reach them');
  pinoLogger.info(
    {
      port: config.port,
      host: config.host,
      database: config.database.kind,
      httpAdapter: config.httpAdapter,
      tracing: config.tracing.exporter,
    },
    'Toolgate is listening',
  );
}

bootstrap().catch((error: unknown) => {
  process.stderr.write(`Toolgate failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
