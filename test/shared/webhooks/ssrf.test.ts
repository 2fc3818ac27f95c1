import { describe, expect, it } from 'vitest';
import { isForbiddenAddress, targetUrlProblem } from '../../../shared/webhooks/ssrf.js';

describe('isForbiddenAddress', () => {
  it.each([
    '127.0.0.1', '127.255.0.9', '10.0.0.1', '172.16.5.4', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1',
    '100.127.255.254', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fc00::1', 'fd00:ec2::254',
    '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.1.2.3', '::ffff:169.254.169.254', '64:ff9b::a9fe:a9fe', '2002:0a00:0001::1', 'ff02::1', 'not-an-ip',
  ])('refuses %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each(['93.184.215.14', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });
});

describe('targetUrlProblem', () => {
  const resolveTo = (addresses: string[]) => async () => addresses;

  it('refuses a name that resolves to a private address', async () => {
    const problem = await targetUrlProblem('https://internal.example.com/hook', { allowInsecure: false, resolve: resolveTo(['10.0.0.7']) });
    expect(problem).toContain('10.0.0.7');
  });

  it('refuses a name when any of its addresses is private (rebinding)', async () => {
    expect(await targetUrlProblem('https://mixed.example.com/', { allowInsecure: false, resolve: resolveTo(['93.184.215.14', '192.168.0.2']) })).toBeDefined();
  });

  it('accepts a name that resolves to public addresses only', async () => {
    expect(await targetUrlProblem('https://hooks.example.com/x', { allowInsecure: false, resolve: resolveTo(['93.184.215.14']) })).toBeUndefined();
  });

  it('refuses a name that does not resolve', async () => {
    const failing = async () => {
      throw new Error('ENOTFOUND');
    };
    expect(await targetUrlProblem('https://nowhere.invalid/', { allowInsecure: false, resolve: failing })).toContain('cannot be resolved');
  });

  it('refuses http:// and credentials in the URL', async () => {
    expect(await targetUrlProblem('http://hooks.example.com/', { allowInsecure: false, resolve: resolveTo(['93.184.215.14']) })).toContain('https');
    expect(await targetUrlProblem('https://user:pw@hooks.example.com/', { allowInsecure: false })).toContain('credentials');
  });

  it('ALLOW_INSECURE_WEBHOOKS lifts the https and address rules', async () => {
    expect(await targetUrlProblem('http://127.0.0.1:8080/hook', { allowInsecure: true })).toBeUndefined();
  });
});
