import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { SkillsRepository } from './skills.repository.js';

// The data migration of sealed secrets, run at every start before traffic: rows stored in clear (before
// sealing existed) or sealed with a key that is no longer SECRETS_KEY are sealed with the current key.
// With nothing to do it costs one query.
@Injectable()
export class SkillSecretsResealer implements OnApplicationBootstrap {
  private readonly logger = new Logger('Secrets');

  constructor(private readonly repository: SkillsRepository) {}

  async onApplicationBootstrap(): Promise<void> {
    const resealed = await this.repository.resealSecrets((skillId, error) =>
      this.logger.error(
        `Skill ${skillId}: its secrets cannot be opened (${error.message}); put the key that sealed them in SECRETS_KEY_PREVIOUS and restart`,
      ),
    );
    if (resealed > 0) this.logger.log(`Sealed the secrets of ${resealed} skill(s) with the current SECRETS_KEY`);
  }
}
