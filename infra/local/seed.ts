/**
 * Sample data to play with (`npm run seed`, or `SEED=demo npm start` on an empty DATA_DIR): a
 * demo tenant with an admin and a user, and a few hundred tasks, products, customers and orders,
 * written through the same domain code as the API's creates (validation, row-level security,
 * listing copies, counters, change events). Deterministic content, so that two seeded machines
 * show the same records; generated passwords, printed once.
 */
import { createTenantWithAdmin, createUser, getUserByEmail, type User } from '../../shared/data/identity.js';
import { generatePassword, hashPassword } from '../../shared/auth/passwords.js';
import { scopesForRole } from '../../shared/scopes.js';
import { createRecord } from '../../shared/entities/service.js';
import type { AuthContext } from '../../shared/caller.js';
import { findEntity, loadRegistry } from '../../shared/registry/index.js';

export const DEMO_ADMIN_EMAIL = 'demo-admin@example.com';
export const DEMO_USER_EMAIL = 'demo-user@example.com';
export const DEMO_COUNTS = { products: 80, customers: 60, orders: 120, tasks: 240 } as const;

export interface SeedResult {
  created: boolean;
  tenantId: string;
  users: { email: string; role: string; password?: string }[];
  counts: Record<string, number>;
}

function auth(user: User): AuthContext {
  return { type: 'session', user: { id: user.id, email: user.email, name: user.name, role: user.role }, tenantId: user.tenantId, scopes: scopesForRole(user.role) };
}

const WORDS = ['report', 'invoice', 'release', 'review', 'budget', 'roadmap', 'onboarding', 'audit', 'backup', 'migration', 'newsletter', 'workshop'];
const VERBS = ['Write', 'Check', 'Plan', 'Send', 'Prepare', 'Update', 'Close', 'Schedule'];
const CATEGORIES = ['home', 'office', 'garden', 'kitchen', 'outdoor'];
const ITEMS = ['Lamp', 'Desk', 'Chair', 'Shelf', 'Mug', 'Kettle', 'Rug', 'Planter', 'Clock', 'Bench'];
const FIRST = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Frances', 'Ken', 'Margaret', 'Niklaus'];
const LAST = ['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Knuth', 'Allen', 'Thompson', 'Hamilton', 'Wirth'];

/** Runs `make(i)` for i in [0, n) a few at a time. */
async function many<T>(n: number, make: (i: number) => Promise<T>, parallel = 8): Promise<T[]> {
  const out: T[] = [];
  for (let start = 0; start < n; start += parallel) {
    out.push(...(await Promise.all(Array.from({ length: Math.min(parallel, n - start) }, (_, k) => make(start + k)))));
  }
  return out;
}

export async function seedDemo(): Promise<SeedResult> {
  await loadRegistry();
  const existing = await getUserByEmail(DEMO_ADMIN_EMAIL);
  if (existing) {
    return {
      created: false,
      tenantId: existing.tenantId,
      users: [
        { email: DEMO_ADMIN_EMAIL, role: 'admin' },
        { email: DEMO_USER_EMAIL, role: 'user' },
      ],
      counts: {},
    };
  }
  const adminPassword = generatePassword();
  const userPassword = generatePassword();
  const { tenant, admin } = await createTenantWithAdmin({ name: 'Demo' }, { email: DEMO_ADMIN_EMAIL, name: 'Demo Admin', passwordHash: await hashPassword(adminPassword) });
  const user = await createUser({ tenantId: tenant.id, email: DEMO_USER_EMAIL, name: 'Demo User', role: 'user', passwordHash: await hashPassword(userPassword) });
  const asAdmin = auth(admin);
  const asUser = auth(user);
  const entity = (slug: string) => {
    const found = findEntity(slug);
    if (!found) throw new Error(`The sample data needs the entity '${slug}'`);
    return found;
  };

  await many(DEMO_COUNTS.products, (i) =>
    createRecord(entity('products'), asAdmin, {
      name: `${ITEMS[i % ITEMS.length]} ${Math.floor(i / ITEMS.length) + 1}`,
      price: Math.round((5 + ((i * 37) % 400) + (i % 100) / 100) * 100) / 100,
      status: i % 7 === 0 ? 'inactive' : 'active',
      category: CATEGORIES[i % CATEGORIES.length],
      description: `A ${CATEGORIES[i % CATEGORIES.length]} ${ITEMS[i % ITEMS.length].toLowerCase()}.`,
    }),
  );
  const customers = await many(DEMO_COUNTS.customers, (i) => {
    const name = `${FIRST[i % FIRST.length]} ${LAST[(i * 3) % LAST.length]}`;
    return createRecord(entity('customers'), asUser, { name, email: `${name.toLowerCase().replace(' ', '.')}${i}@example.com`, ...(i % 3 ? { phone: `+1 555 01${String(i).padStart(2, '0')}` } : {}) });
  });
  await many(DEMO_COUNTS.orders, (i) =>
    createRecord(entity('orders'), asUser, {
      customerId: customers[i % customers.length].id,
      status: (['pending', 'paid', 'shipped', 'cancelled'] as const)[i % 4],
      total: Math.round((20 + ((i * 53) % 900)) * 100) / 100,
    }),
  );
  await many(DEMO_COUNTS.tasks, (i) => {
    const mine = i % 3 !== 0;
    return createRecord(entity('tasks'), mine ? asUser : asAdmin, {
      title: `${VERBS[i % VERBS.length]} the ${WORDS[(i * 5) % WORDS.length]} #${i + 1}`,
      status: (['todo', 'in_progress', 'completed'] as const)[i % 3],
      priority: (['low', 'medium', 'high'] as const)[(i * 7) % 3],
      ...(mine ? {} : { assigneeId: user.id }),
    });
  });
  return {
    created: true,
    tenantId: tenant.id,
    users: [
      { email: DEMO_ADMIN_EMAIL, role: 'admin', password: adminPassword },
      { email: DEMO_USER_EMAIL, role: 'user', password: userPassword },
    ],
    counts: { ...DEMO_COUNTS },
  };
}

/** How to sign in as each demo user, for the terminal. */
export function describeSeed(result: SeedResult, url: string): string {
  const lines = [
    result.created
      ? `Sample data: tenant "Demo" (${result.tenantId}) with ${Object.entries(result.counts).map(([k, n]) => `${n} ${k}`).join(', ')}.`
      : `Sample data: the demo tenant (${result.tenantId}) exists already; nothing added.`,
  ];
  for (const u of result.users) {
    lines.push(
      u.password
        ? `  ${u.role.padEnd(5)}  ${u.email}  password ${u.password}   curl -c cookies.txt -H 'Content-Type: application/json' -d '{"email":"${u.email}","password":"${u.password}"}' ${url}/api/v1/auth/login`
        : `  ${u.role.padEnd(5)}  ${u.email}  (password set at seeding; a new one: npm run admin -- reset-password ${u.email})`,
    );
  }
  return lines.join('\n');
}
