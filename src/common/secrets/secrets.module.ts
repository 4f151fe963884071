import { createHash } from 'node:crypto';
import { Global, Logger, Module } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { SecretBox } from './secret-box.js';

// Known to everyone, so it protects nothing: it only keeps development and test setups free of a
// variable. Production refuses to start without SECRETS_KEY, and values it sealed are re-sealed with the
// real key at the first start that has one.
const DEVELOPMENT_KEY = createHash('sha256').update('toolgate development secrets key: not a secret').digest();

function createSecretBox(config: AppConfig): SecretBox {
  const { key, previousKeys } = config.secrets;
  if (key) return new SecretBox(key, [...previousKeys, DEVELOPMENT_KEY]);
  new Logger('Secrets').warn(
    'SECRETS_KEY is not set: skill secrets are sealed with the built-in development key; set SECRETS_KEY before storing real secrets',
  );
  return new SecretBox(DEVELOPMENT_KEY, previousKeys);
}

@Global()
@Module({ providers: [{ provide: SecretBox, useFactory: createSecretBox, inject: [APP_CONFIG] }], exports: [SecretBox] })
export class SecretsModule {}
