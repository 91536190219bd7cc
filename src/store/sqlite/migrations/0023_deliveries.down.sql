DROP TABLE deliveries;
DROP TABLE endpoints;
DROP TABLE event_consumers;
