-- sample.sql: the bundled sample database that exec_sql queries when
-- CODEBOX_SQL_DSN is not set. `make` turns it into build/sample.sqlite with
-- the sqlite3 command-line tool; nothing binary is kept in git.
--
-- A small shop: 8 categories, 40 products, 120 customers in 20 cities,
-- 300 orders over 2023-2024 and their order items (about 750), plus a
-- view of order totals. The rows are made deterministically (no random()),
-- so every build gives the same database and tests can count on numbers
-- such as "120 customers".

PRAGMA foreign_keys = ON;
BEGIN;

CREATE TABLE categories (
    category_id INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL
);

CREATE TABLE products (
    product_id  INTEGER PRIMARY KEY,
    sku         TEXT NOT NULL UNIQUE,
    name        TEXT NOT NULL,
    category_id INTEGER NOT NULL REFERENCES categories (category_id),
    unit_price  REAL NOT NULL CHECK (unit_price > 0),
    in_stock    INTEGER NOT NULL DEFAULT 1 CHECK (in_stock IN (0, 1))
);

CREATE TABLE customers (
    customer_id INTEGER PRIMARY KEY,
    first_name  TEXT NOT NULL,
    last_name   TEXT NOT NULL,
    email       TEXT NOT NULL UNIQUE,
    city        TEXT NOT NULL,
    country     TEXT NOT NULL,
    signup_date TEXT NOT NULL,          -- ISO 8601 date
    notes       TEXT                    -- often NULL
);

CREATE TABLE orders (
    order_id    INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers (customer_id),
    order_date  TEXT NOT NULL,          -- ISO 8601 date
    status      TEXT NOT NULL CHECK (status IN ('pending', 'shipped', 'delivered', 'cancelled', 'returned')),
    shipping    REAL NOT NULL DEFAULT 0
);

CREATE TABLE order_items (
    order_id    INTEGER NOT NULL REFERENCES orders (order_id),
    line_no     INTEGER NOT NULL,
    product_id  INTEGER NOT NULL REFERENCES products (product_id),
    quantity    INTEGER NOT NULL CHECK (quantity > 0),
    unit_price  REAL NOT NULL,
    discount    REAL NOT NULL DEFAULT 0 CHECK (discount >= 0 AND discount < 1),
    PRIMARY KEY (order_id, line_no)
);

CREATE INDEX orders_customer ON orders (customer_id);
CREATE INDEX order_items_product ON order_items (product_id);

INSERT INTO categories (category_id, name, description) VALUES
    (1, 'Coffee', 'Whole beans and ground coffee'),
    (2, 'Tea', 'Loose-leaf tea and tea bags'),
    (3, 'Brewing', 'Kettles, grinders and brewers'),
    (4, 'Cups & Mugs', 'Ceramic, glass and travel cups'),
    (5, 'Snacks', 'Biscuits, chocolate and dried fruit'),
    (6, 'Books', 'Books about coffee and tea'),
    (7, 'Gift Sets', 'Boxed gifts'),
    (8, 'Accessories', 'Filters, scales and storage');

INSERT INTO products (product_id, sku, name, category_id, unit_price, in_stock) VALUES
    (1, 'COF-001', 'Ethiopia Yirgacheffe 250 g', 1, 12.50, 1),
    (2, 'COF-002', 'Colombia Huila 250 g', 1, 10.90, 1),
    (3, 'COF-003', 'Brazil Cerrado 1 kg', 1, 29.00, 1),
    (4, 'COF-004', 'Guatemala Antigua 250 g', 1, 11.75, 1),
    (5, 'COF-005', 'Kenya AA 250 g', 1, 14.20, 0),
    (6, 'COF-006', 'Decaf Espresso Blend 500 g', 1, 16.40, 1),
    (7, 'TEA-001', 'Darjeeling First Flush 100 g', 2, 9.80, 1),
    (8, 'TEA-002', 'Sencha Green Tea 100 g', 2, 7.60, 1),
    (9, 'TEA-003', 'Earl Grey 50 bags', 2, 5.95, 1),
    (10, 'TEA-004', 'Rooibos Vanilla 100 g', 2, 6.30, 1),
    (11, 'TEA-005', 'Oolong Tie Guan Yin 100 g', 2, 13.10, 1),
    (12, 'BRW-001', 'Pour-over Dripper', 3, 24.00, 1),
    (13, 'BRW-002', 'Burr Grinder', 3, 89.00, 1),
    (14, 'BRW-003', 'Gooseneck Kettle', 3, 59.90, 1),
    (15, 'BRW-004', 'French Press 1 l', 3, 34.50, 1),
    (16, 'BRW-005', 'Moka Pot 6 cups', 3, 27.80, 0),
    (17, 'BRW-006', 'Cold Brew Bottle', 3, 19.99, 1),
    (18, 'CUP-001', 'Stoneware Mug', 4, 14.00, 1),
    (19, 'CUP-002', 'Double-wall Glass Pair', 4, 18.50, 1),
    (20, 'CUP-003', 'Travel Tumbler 350 ml', 4, 22.00, 1),
    (21, 'CUP-004', 'Espresso Cups Set of 4', 4, 26.00, 1),
    (22, 'SNK-001', 'Almond Biscotti', 5, 4.50, 1),
    (23, 'SNK-002', 'Dark Chocolate 70%', 5, 3.20, 1),
    (24, 'SNK-003', 'Dried Mango', 5, 5.10, 1),
    (25, 'SNK-004', 'Shortbread Tin', 5, 8.90, 1),
    (26, 'BOK-001', 'The World Atlas of Coffee', 6, 32.00, 1),
    (27, 'BOK-002', 'The Tea Book', 6, 21.00, 1),
    (28, 'BOK-003', 'Espresso at Home', 6, 18.00, 0),
    (29, 'GFT-001', 'Coffee Lover''s Box', 7, 49.00, 1),
    (30, 'GFT-002', 'Tea Tasting Set', 7, 39.00, 1),
    (31, 'GFT-003', 'Café Crème Gift Set', 7, 44.00, 1),
    (32, 'ACC-001', 'Paper Filters x100', 8, 4.90, 1),
    (33, 'ACC-002', 'Digital Scale 0.1 g', 8, 29.90, 1),
    (34, 'ACC-003', 'Airtight Canister', 8, 17.50, 1),
    (35, 'ACC-004', 'Milk Frother', 8, 15.00, 1),
    (36, 'ACC-005', 'Tamper 58 mm', 8, 21.50, 1),
    (37, 'ACC-006', 'Cleaning Tablets', 8, 7.40, 1),
    (38, 'COF-007', 'Sumatra Mandheling 250 g', 1, 12.10, 1),
    (39, 'TEA-006', 'Matcha Ceremonial 30 g', 2, 19.50, 1),
    (40, 'SNK-005', 'Salted Caramel Wafers', 5, 3.90, 1);

-- 120 customers: first and last names combined by fixed steps, cities
-- from a list of 20 with their countries, signup dates over 2022-2023.
CREATE TEMP TABLE first_names (i INTEGER PRIMARY KEY, name TEXT);
INSERT INTO first_names (i, name) VALUES
    (0, 'Anna'), (1, 'Ben'), (2, 'Chloé'), (3, 'David'), (4, 'Elif'), (5, 'Farid'),
    (6, 'Grace'), (7, 'Hiroshi'), (8, 'Isabel'), (9, 'Jonas'), (10, 'Karin'), (11, 'Luis'),
    (12, 'Maya'), (13, 'Noah'), (14, 'Olga'), (15, 'Pedro'), (16, 'Quinn'), (17, 'Rosa'),
    (18, 'Sven'), (19, 'Tariq'), (20, 'Uma'), (21, 'Viktor'), (22, 'Wen'), (23, 'Zoë');
CREATE TEMP TABLE last_names (i INTEGER PRIMARY KEY, name TEXT);
INSERT INTO last_names (i, name) VALUES
    (0, 'Andersson'), (1, 'Becker'), (2, 'Costa'), (3, 'Dubois'), (4, 'Evans'),
    (5, 'Fischer'), (6, 'García'), (7, 'Haddad'), (8, 'Ivanova'), (9, 'Jensen'),
    (10, 'Kowalski'), (11, 'Lee'), (12, 'Müller'), (13, 'Nakamura'), (14, 'O''Brien'),
    (15, 'Patel'), (16, 'Rossi'), (17, 'Silva');
CREATE TEMP TABLE cities (i INTEGER PRIMARY KEY, city TEXT, country TEXT);
INSERT INTO cities (i, city, country) VALUES
    (0, 'Berlin', 'Germany'), (1, 'Hamburg', 'Germany'), (2, 'Munich', 'Germany'),
    (3, 'Paris', 'France'), (4, 'Lyon', 'France'), (5, 'Madrid', 'Spain'),
    (6, 'Barcelona', 'Spain'), (7, 'Lisbon', 'Portugal'), (8, 'Rome', 'Italy'),
    (9, 'Milan', 'Italy'), (10, 'Amsterdam', 'Netherlands'), (11, 'Vienna', 'Austria'),
    (12, 'Zürich', 'Switzerland'), (13, 'Stockholm', 'Sweden'), (14, 'Copenhagen', 'Denmark'),
    (15, 'Warsaw', 'Poland'), (16, 'Dublin', 'Ireland'), (17, 'London', 'United Kingdom'),
    (18, 'Manchester', 'United Kingdom'), (19, 'Tokyo', 'Japan');

WITH RECURSIVE n (k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < 120)
INSERT INTO customers (customer_id, first_name, last_name, email, city, country, signup_date, notes)
SELECT k, f.name, l.name,
       lower(replace(replace(f.name, 'é', 'e'), 'ë', 'e')) || '.'
           || lower(replace(replace(replace(replace(l.name, '''', ''), 'ü', 'u'), 'í', 'i'), ' ', ''))
           || k || '@example.com',
       c.city, c.country,
       date('2022-01-01', '+' || ((k * 37) % 730) || ' days'),
       CASE WHEN k % 9 = 0 THEN 'prefers delivery after 5 pm'
            WHEN k % 13 = 0 THEN 'wholesale account'
            WHEN k % 17 = 0 THEN 'asked to delete me from the newsletter'
            ELSE NULL END
FROM n
JOIN first_names f ON f.i = (k * 7) % 24
JOIN last_names l ON l.i = (k * 5 + k / 18) % 18
JOIN cities c ON c.i = (k * 11) % 20;

-- 300 orders over 2023-2024; most delivered, some pending/cancelled.
WITH RECURSIVE n (k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < 300)
INSERT INTO orders (order_id, customer_id, order_date, status, shipping)
SELECT k,
       1 + (k * 53) % 120,
       date('2023-01-01', '+' || ((k * 61) % 731) || ' days'),
       CASE WHEN k % 23 = 0 THEN 'cancelled'
            WHEN k % 31 = 0 THEN 'returned'
            WHEN k > 292 THEN 'pending'
            WHEN k > 284 THEN 'shipped'
            ELSE 'delivered' END,
       CASE WHEN k % 4 = 0 THEN 0 ELSE 4.90 END
FROM n;

-- 1 to 4 lines per order; the price is the product's price, with a 10 %
-- discount on every seventh line.
WITH RECURSIVE lines (order_id, line_no) AS (
    SELECT order_id, 1 FROM orders
    UNION ALL
    SELECT order_id, line_no + 1 FROM lines WHERE line_no < 1 + (order_id * 7) % 4
)
INSERT INTO order_items (order_id, line_no, product_id, quantity, unit_price, discount)
SELECT l.order_id, l.line_no, p.product_id,
       1 + (l.order_id + l.line_no * 3) % 3,
       p.unit_price,
       CASE WHEN (l.order_id + l.line_no) % 7 = 0 THEN 0.10 ELSE 0 END
FROM lines l
JOIN products p ON p.product_id = 1 + (l.order_id * 13 + l.line_no * 17) % 40;

CREATE VIEW order_totals AS
SELECT o.order_id, o.customer_id, o.order_date, o.status,
       round(sum(i.quantity * i.unit_price * (1 - i.discount)) + o.shipping, 2) AS total,
       sum(i.quantity) AS items
FROM orders o JOIN order_items i ON i.order_id = o.order_id
GROUP BY o.order_id;

DROP TABLE first_names;
DROP TABLE last_names;
DROP TABLE cities;

COMMIT;
