import { afterEach, describe, expect, it } from 'vitest';
import { deploymentKey, resetDeploymentSecret } from '../../shared/deployment-secret.js';

const saved = { ...process.env };

afterEach(() => {
  process.env = { ...saved };
  resetDeploymentSecret();
});

describe('deploymentKey', () => {
  it('derives the same 32-byte key from the same secret, and a different one per purpose', async () => {
    // Arrange
    process.env.DEPLOYMENT_SECRET = 'one secret';
    delete process.env.DEPLOYMENT_SECRET_ARN;
    resetDeploymentSecret();
    // Act
    const cursor = await deploymentKey('cursor');
    const webhooks = await deploymentKey('webhook-secrets');
    resetDeploymentSecret();
    const again = await deploymentKey('cursor');
    // Assert
    expect(cursor).toHaveLength(32);
    expect(again.equals(cursor)).toBe(true);
    expect(webhooks.equals(cursor)).toBe(false);
  });

  it('gives another key for another secret', async () => {
    process.env.DEPLOYMENT_SECRET = 'one secret';
    const first = await deploymentKey('cursor');
    process.env.DEPLOYMENT_SECRET = 'another secret';
    resetDeploymentSecret();
    expect((await deploymentKey('cursor')).equals(first)).toBe(false);
  });

  it('refuses to invent a key on Lambda when the deployment gives none', async () => {
    delete process.env.DEPLOYMENT_SECRET;
    delete process.env.DEPLOYMENT_SECRET_ARN;
    process.env.AWS_LAMBDA_FUNCTION_NAME = 'entities';
    resetDeploymentSecret();
    await expect(deploymentKey('cursor')).rejects.toThrow('DEPLOYMENT_SECRET_ARN is not set');
  });
});
