// Which payload codec a config asks for (docs/data.md): AES-256-GCM when a keyring is given
// (config encryption.keyFile, else $TRANQUIL_KEY_FILE, else the env var encryption.keyEnv,
// default $TRANQUIL_KEYS), else the identity codec. The engine and the CLI's readers build it
// the same way, so both read what the other wrote.
import { ValidationError } from '../src/domain/errors.ts';
import { identityCodec, type PayloadCodec } from '../src/domain/payload-codec.ts';
import { AesGcmCodec, parseKeyring, readKeyFile } from '../src/adapters/crypto/aes-gcm-codec.ts';
import type { ResolvedConfig } from './config.ts';

export const DEFAULT_KEY_ENV = 'TRANQUIL_KEYS';

export function payloadCodecFor(config: Pick<ResolvedConfig, 'encryption'>, env: NodeJS.ProcessEnv = process.env): PayloadCodec {
  const file = config.encryption?.keyFile ?? (env.TRANQUIL_KEY_FILE || undefined);
  if (file) return new AesGcmCodec(readKeyFile(file));
  const name = config.encryption?.keyEnv ?? DEFAULT_KEY_ENV;
  const text = env[name];
  if (text) return new AesGcmCodec(parseKeyring(text, `env ${name}`));
  if (config.encryption?.keyEnv) throw new ValidationError(`engine config.encryption.keyEnv: env ${name} is not set`);
  return identityCodec;
}
